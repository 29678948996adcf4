"""Mitigation protocols: message building and reconciliation on hand-made answers, each protocol through
the symbolic backend and the sqlite cache, and resuming a protocol killed between its turns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import sympy
from helpers.suite_runner import REPO

from mathcomp_tests import prompts
from mathcomp_tests.backends.base import OnResponse
from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache
from mathcomp_tests.backends.local.symbolic import REWRITE_REPLY, SymbolicBackend
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.protocols import (
    ASK,
    PROTOCOLS,
    Kit,
    canonicalize,
    dual_direction,
    evidence_lock,
    load_texts,
    reveal_after,
)
from mathcomp_tests.protocols.totals import totals_prompt
from mathcomp_tests.reading import totals, yes_no
from mathcomp_tests.types import Condition, Decoding, Prediction, Prompt, Response, Turn

SCENARIOS = load(REPO / "fixtures" / "scenarios.csv")[:12]
PROMPT_SET = prompts.load_prompt_set("hf")


def kit() -> Kit:
    return Kit(
        PROMPT_SET,
        lambda c: prompts.std_names(PROMPT_SET),
        load_texts(),
        None,
        lambda fmt: FORMATS[fmt].max_new_tokens,
    )


def case(framing: str = "direct-more", protocol: str = "plain", fmt: str = "one-word") -> list[Prompt]:
    condition = Condition(framing, "end", format=fmt, protocol=protocol)
    names = prompts.std_names(PROMPT_SET)
    return [prompts.build(s, condition, PROMPT_SET, names) for s in SCENARIOS]


def test_a_plain_case_keeps_its_id_and_another_protocol_shows_in_it() -> None:
    assert Condition("neutral", "end").id == "neutral-end-std-one-word"
    assert Condition("neutral", "end", protocol="plain").id == "neutral-end-std-one-word"
    assert Condition("neutral", "end", protocol="evidence-lock").id == "neutral-end-std-one-word-protocol-evidence-lock"
    assert PROTOCOLS == ("plain", "cot", "evidence-lock", "dual-direction", "canonicalize", "symbolic")


# --- readers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "a", "b"),
    [
        ("PERSON_A: 12\nPERSON_B: 7.5", 12, sympy.Rational(15, 2)),
        ("Adding up, person_a: $1,250.50 and PERSON_B = 7/2", sympy.Rational(250100, 200), sympy.Rational(7, 2)),
        ("PERSON_A: 3\nPERSON_B: 4\nWait, I mis-added.\nPERSON_A: 5\nPERSON_B: 4", 5, 4),
        ("**PERSON_A:** 10 hours\n**PERSON_B:** -2", 10, -2),
    ],
)
def test_totals_are_read_exactly_by_the_persons_names(text: str, a: object, b: object) -> None:
    got = totals.read(text, "PERSON_A", "PERSON_B")
    assert got.read and got.a == a and got.b == b and got.rule == "totals"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("more", "no total for PERSON_A and PERSON_B"),
        ("PERSON_A: 12\nPERSON_B: a lot", "no total for PERSON_B"),
        ("A: 3, B: 4", "no total for PERSON_A and PERSON_B"),
    ],
)
def test_an_answer_without_both_totals_is_unread_not_guessed(text: str, why: str) -> None:
    got = totals.read(text, "PERSON_A", "PERSON_B")
    assert not got.read and got.rule == f"invalid: {why}" and totals.compare(got) is None


def test_sympy_compares_the_totals_b_against_a() -> None:
    def label(a: str, b: str) -> str | None:
        return totals.compare(totals.read(f"X: {a}\nY: {b}", "X", "Y"))

    assert label("0.1", "1/10") == "equal"
    assert label("3", "3.0001") == "more"
    assert label("1,000", "999.99") == "less"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", True),
        ("No.", False),
        ("Let me add: 3 + 4 = 7, no doubt.\nAnswer: yes", True),
        ("Yes, and then no... Answer: **no**", False),
        ("maybe", None),
        ("yes and no", None),
    ],
)
def test_yes_no_answers(text: str, value: bool | None) -> None:
    assert yes_no.read(text).value is value


# --- message building ------------------------------------------------------------------------------


def test_the_totals_turn_carries_no_cue_and_is_the_same_in_every_framing() -> None:
    turns = {f: totals_prompt(case(f)[0], kit()) for f in ("neutral", "direct-more", "indirect-less")}
    texts = {t.text for t in turns.values()}
    assert len(texts) == 1
    text = texts.pop()
    assert SCENARIOS[0].text_a.split()[1] in text  # the context is there
    assert not any(w in text.lower() for w in (" more ", " less ", "equal", "a) less"))
    assert text.rstrip().endswith("PERSON_A: <total>\nPERSON_B: <total>")
    assert all(t.asks == "totals" and len(t.messages) == 1 for t in turns.values())


def test_evidence_lock_turn_two_continues_the_conversation_with_the_locked_totals() -> None:
    prompt = case("indirect-more")[0]
    first = totals_prompt(prompt, kit())
    reply = Response("B first: 4 + 4 = 8.\nPERSON_A: 12\nPERSON_B: 8")
    got = totals.read(reply.text, "PERSON_A", "PERSON_B")
    second = evidence_lock.label_prompt(prompt, Turn("totals", first, reply), got, kit())
    roles = [m.role for m in second.messages]
    assert roles == ["user", "assistant", "user"]
    assert second.messages[0].content == first.text and second.messages[1].content == reply.text
    last = second.messages[2].content
    assert "PERSON_A: 12\nPERSON_B: 8" in last
    assert "in several instances" in last  # the case's own cued question is asked in turn 2
    assert last.endswith(PROMPT_SET.instructions["one-word"])
    unread_totals = totals.read("more", "PERSON_A", "PERSON_B")
    unread = evidence_lock.label_prompt(prompt, Turn("totals", first, Response("more")), unread_totals, kit())
    assert "(the totals you gave above)" in unread.messages[2].content


def test_dual_direction_asks_both_directions_in_the_case_position() -> None:
    prompt = case("direct-equal")[0]
    more = dual_direction.direction_prompt(prompt, "more", kit())
    less = dual_direction.direction_prompt(prompt, "less", kit())
    assert "spend more" in more.text and "spend less" in less.text
    assert "equal" not in more.text.lower() and more.text.endswith("yes or no.")
    assert more.text.startswith(kit().parts(prompt).context)  # position end: the context comes first
    indirect = dual_direction.direction_prompt(case("indirect-less")[0], "more", kit())
    assert "in several instances" in indirect.text and "spends more" in indirect.text
    steps = dual_direction.direction_prompt(case("neutral", fmt="cot")[0], "less", kit())
    assert 'end with "Answer: yes" or "Answer: no"' in steps.text


@pytest.mark.parametrize(
    ("more", "less", "label", "rule"),
    [
        ("yes", "no", "more", "yes to more, no to less"),
        ("no", "Answer: yes", "less", "no to more, yes to less"),
        ("No.", "no", "equal", "no to both directions"),
        ("yes", "yes", None, "invalid: disagree: yes to both directions"),
        ("more", "no", None, "invalid: more question: invalid: no yes or no"),
    ],
)
def test_dual_direction_reconciles_hand_made_answers(more: str, less: str, label: str | None, rule: str) -> None:
    assert dual_direction.reconcile(yes_no.read(more), yes_no.read(less)) == (label, rule)


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("How does the amount of time PERSON_B spends on it compare to that of PERSON_A?", True),
        ("Question: How do PERSON_B's and PERSON_A's amounts compare?", True),
        ("Does PERSON_B spend more time than PERSON_A?", False),
        ("Do PERSON_A and PERSON_B spend the same?", False),
        ("How does PERSON_B's time compare?", False),
        ("How does PERSON_B compare to PERSON_A", False),
        ("", False),
    ],
)
def test_canonicalize_keeps_only_a_neutral_rewrite_naming_both_persons(reply: str, kept: bool) -> None:
    question, why = canonicalize.checked(case()[0], Response(reply))
    assert (question is not None) is kept, why


def test_canonicalize_sends_the_rewrite_or_falls_back_to_the_neutral_question(tmp_path: Path) -> None:
    backend = CachedBackend(SymbolicBackend(), ResponseCache(tmp_path / "c.sqlite"))
    got = canonicalize.ask(case("indirect-more"), backend, Decoding(8), kit())
    neutral = case("neutral")
    for answer, plain in zip(got, neutral, strict=True):
        rewrite, label = answer.turns
        assert rewrite.response.text == REWRITE_REPLY and rewrite.prompt.asks == "rewrite"
        assert answer.note.startswith("rewrite rejected: ")
        assert label.prompt.text == plain.text  # the deterministic fallback is exactly the neutral prompt
        assert answer.prediction.label == plain.scenario.label


# --- every protocol through the symbolic backend and the cache -------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("fmt", ["one-word", "cot-json"])
def test_every_protocol_answers_the_reference_correctly(tmp_path: Path, protocol: str, fmt: str) -> None:
    backend = CachedBackend(SymbolicBackend(), ResponseCache(tmp_path / "c.sqlite"))
    asked = case("indirect-less", protocol, fmt)
    got = ASK[protocol](asked, backend, Decoding(FORMATS[fmt].max_new_tokens), kit(), None)
    assert [a.prediction.label for a in got] == [s.label for s in SCENARIOS]
    turns = {"evidence-lock": 2, "dual-direction": 2, "canonicalize": 2}.get(protocol, 1)
    assert all(len(a.turns) == turns for a in got) and backend.calls == turns * len(SCENARIOS)
    again = ASK[protocol](asked, backend, Decoding(FORMATS[fmt].max_new_tokens), kit(), None)
    assert backend.calls == turns * len(SCENARIOS), "a second run is answered from the cache"
    assert all(t.response.cached for a in again for t in a.turns)


def test_turn_budgets_follow_the_turn_and_the_max_new_tokens_option() -> None:
    assert kit().decoding(Decoding(8), "totals-short").max_new_tokens == 48
    assert kit().decoding(Decoding(8), "cot").max_new_tokens == 512
    assert replace(kit(), max_new_tokens=20).decoding(Decoding(8), "totals-steps").max_new_tokens == 20


class FakeCrashAfterFirstBatch:
    """A fake: the symbolic backend that dies (like a killed process) on its second batch."""

    model_id, revision, streams = "symbolic", "1", False

    def __init__(self) -> None:
        self.inner, self.batches = SymbolicBackend(), 0

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        self.batches += 1
        if self.batches > 1:
            raise KeyboardInterrupt("killed between turns")
        return self.inner.complete(prompts, decoding, on_response)

    def cache_identity(self) -> dict[str, object]:
        return self.inner.cache_identity()

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return self.inner.prompt_inputs(prompt)

    def close(self) -> None:
        return None


def test_a_protocol_killed_after_turn_one_resumes_with_turn_one_from_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    asked = case("direct-less", "evidence-lock")
    crashing = CachedBackend(FakeCrashAfterFirstBatch(), ResponseCache(path))
    with pytest.raises(KeyboardInterrupt):
        evidence_lock.ask(asked, crashing, Decoding(8), kit())
    assert crashing.calls == 2 * len(SCENARIOS)  # turn 1 answered and stored, turn 2 attempted
    assert crashing.cache is not None
    crashing.cache.close()
    resumed = CachedBackend(SymbolicBackend(), ResponseCache(path))
    got = evidence_lock.ask(asked, resumed, Decoding(8), kit())
    assert all(a.turns[0].response.cached for a in got), "turn 1 came from the cache"
    assert not any(a.turns[1].response.cached for a in got)
    assert resumed.calls == len(SCENARIOS), "only turn 2 was sent again"
    assert [a.prediction.label for a in got] == [s.label for s in SCENARIOS]


# --- Reveal-After ----------------------------------------------------------------------------------


def test_reveal_after_flips_to_a_wrong_label_then_asks_the_truth_in_the_same_conversation() -> None:
    neutral = case("neutral")
    for p in neutral:
        assert reveal_after.flip_label(p) != p.scenario.label
    assert {reveal_after.flip_label(p) for p in neutral if p.scenario.label == "less"} <= {"more"}
    prompt = next(p for p in neutral if p.scenario.label == "more")
    first = Turn("flip", reveal_after._cued(prompt, "less", kit()), Response("less"))
    assert "spend less" in first.prompt.text
    second = reveal_after.second_prompt(prompt, first, kit())
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[1].content == "less"
    assert second.messages[2].content.startswith("Does PERSON_B spend more")


def _answer(
    flip: str, truth: str, first: str | None, second: str | None, neutral: str | None
) -> reveal_after.RevealAnswer:
    def pred(label: str | None) -> Prediction:
        return Prediction(label, "ok" if label else "invalid", label or "?")  # type: ignore[arg-type]

    return reveal_after.RevealAnswer(
        case("neutral")[0], flip, truth, pred(first), pred(second), pred(neutral), ()  # type: ignore[arg-type]
    )


def test_reveal_after_shares_on_hand_made_answers() -> None:
    got = reveal_after.summarise(
        [
            _answer("more", "less", "less", "less", "less"),  # tracks content: the same three times
            _answer("more", "less", "more", "less", "less"),  # follows each cue
            _answer("less", "more", "less", "less", "more"),  # anchored on the first cue
            _answer("less", "more", "less", None, "more"),  # unread: left out of the shares, counted
        ]
    )
    assert got["items"] == 4 and got["read"] == 3 and got["unread"] == 1 and got["errors"] == 0
    assert got["first_follows_flip"] == pytest.approx(2 / 3)
    assert got["second_follows_truth"] == pytest.approx(2 / 3)
    assert got["second_keeps_first"] == pytest.approx(2 / 3)
    assert got["first_matches_neutral"] == pytest.approx(1 / 3)
    assert got["second_matches_neutral"] == pytest.approx(2 / 3)
    assert got["all_three_same"] == pytest.approx(1 / 3)


# --- the report's comparison -----------------------------------------------------------------------


def _case(framing: str, protocol: str, more_on_less: int, position: str = "end") -> dict[str, object]:
    """A case summary whose 10 less-gold and 10 equal-gold items were answered `more` ``more_on_less`` times
    (among the less-gold ones): DirErr(more) = more_on_less / 20."""
    confusion = {
        "less": {"less": 10 - more_on_less, "more": more_on_less, "equal": 0, "invalid": 0, "error": 0},
        "more": {"less": 0, "more": 10, "equal": 0, "invalid": 0, "error": 0},
        "equal": {"less": 0, "more": 0, "equal": 10, "invalid": 0, "error": 0},
    }
    return {
        "case": f"{framing}-{position}-{protocol}<script>",
        "framing": framing,
        "position": position,
        "identity": "std",
        "identity_on": "b",
        "format": "one-word",
        "options": "lme",
        "protocol": protocol,
        "scores": {"n": 30, "confusion": confusion},
        "usage": {"input_tokens": 300, "output_tokens": 30, "requests": 60 if protocol != "plain" else 30},
        "protocol_notes": {"disagree": 3} if protocol == "dual-direction" else {},
    }


def test_the_comparison_pools_matched_cases_and_says_what_each_protocol_removes() -> None:
    from mathcomp_tests.report.protocols import comparison, protocols_html

    cases = [
        _case("direct-more", "plain", 8),
        _case("direct-more", "plain", 4, position="begin"),
        _case("direct-more", "dual-direction", 2),
        _case("direct-more", "dual-direction", 0, position="begin"),
    ]
    got = comparison(cases)
    cell = got["cells"]["direct-more"]["dual-direction"]
    assert cell["dir_err"] == pytest.approx(2 / 40) and cell["plain"] == pytest.approx(12 / 40)
    assert cell["removed"] == pytest.approx(10 / 40) and cell["cases"] == 2
    assert got["cost"]["dual-direction"]["requests_per_item"] == 2.0
    assert got["cost"]["dual-direction"]["notes: disagree"] == pytest.approx(6 / 60)  # 3 in each case
    # a protocol case without its plain twin is shown but not compared
    lone = comparison([*cases[:1], _case("direct-more", "symbolic", 1, position="begin")])
    assert lone["cells"]["direct-more"]["symbolic"]["removed"] is None
    page = protocols_html(cases)
    assert "5.0% (−25.0 pts vs plain)" in page and "<script>" not in page
    assert protocols_html([cases[0]]) == "", "nothing to compare under plain alone"
