"""The protocols on what SmolLM2-135M-Instruct really writes.

Asked for "exactly two lines", SmolLM2 writes its two totals, then repeats them until the 48-token budget
cuts it mid-number (`PERSON_A: 14\\nPERSON_B: 14\\nPERSON_A: 14\\nPERSON_B: 14\\nPERSON_A: 1`, scenario 104,
greedy). The replies below are its own, recorded from `--model=smollm2-135m --protocol=symbolic`; a fake
replays them, so these run without the model. The last test runs two multi-call protocols end to end on
SmolLM2 itself (skipped, saying so, where `make smollm2` has not prepared its folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import sympy
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import prompts
from mathcomp_tests.backends.base import OnResponse
from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.protocols import ASK, Kit, load_texts
from mathcomp_tests.protocols.base import TURN_TOKENS
from mathcomp_tests.reading import totals
from mathcomp_tests.types import Condition, Decoding, Prompt, Response

PROMPT_SET = prompts.load_prompt_set("hf")
SCENARIO = next(s for s in load(REPO / "fixtures" / "scenarios.csv") if s.id == "104")  # gold equal: 90 and 90
CUT = "PERSON_A: 14\nPERSON_B: 14\nPERSON_A: 14\nPERSON_B: 14\nPERSON_A: 1"
"""SmolLM2's totals reply on scenario 104: 48 tokens, the budget, so its last line was cut mid-number."""


def kit() -> Kit:
    return Kit(
        PROMPT_SET, lambda c: prompts.std_names(PROMPT_SET), load_texts(), None, lambda f: FORMATS[f].max_new_tokens
    )


class FakeSmolLM2:
    """A fake replaying SmolLM2's recorded totals reply (its whole budget used) and a label answer."""

    model_id, revision, streams = "fake-smollm2", "1", False

    def __init__(self) -> None:
        self.asked: list[Prompt] = []

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        self.asked += prompts
        if all(p.asks == "totals" for p in prompts):
            return [Response(CUT, input_tokens=174, output_tokens=decoding.max_new_tokens) for _ in prompts]
        return [Response("C) equal", input_tokens=340, output_tokens=3) for _ in prompts]

    def cache_identity(self) -> dict[str, object]:
        return {"model": self.model_id}

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def close(self) -> None:
        return None


def case(protocol: str) -> list[Prompt]:
    condition = Condition("direct-less", "end", protocol=protocol)
    return [prompts.build(SCENARIO, condition, PROMPT_SET, prompts.std_names(PROMPT_SET))]


def test_a_total_cut_at_the_token_budget_is_not_read() -> None:
    got = totals.read(CUT, "PERSON_A", "PERSON_B", cut=True)
    assert (got.a, got.b, got.rule) == (sympy.Integer(14), sympy.Integer(14), "totals")
    assert totals.read(CUT, "PERSON_A", "PERSON_B").a == 1, "a reply that ended by itself is read to its end"
    alone = totals.read("PERSON_A: 12\nPERSON_B: 1", "PERSON_A", "PERSON_B", cut=True)
    assert alone.b is None and alone.rule == "invalid: no total for PERSON_B (cut at the token budget)"
    assert totals.finished("PERSON_A: 12\nPERSON_B: 1", cut=True) == "PERSON_A: 12"
    assert totals.finished("PERSON_A: 12\n", cut=True) == "PERSON_A: 12\n"


def test_symbolic_does_not_compare_a_number_the_budget_cut_off() -> None:
    (answer,) = ASK["symbolic"](case("symbolic"), FakeSmolLM2(), Decoding(8), kit(), None)
    assert answer.prediction.label == "equal", answer.prediction  # 14 and 14; read as 1 and 14 it was "more"
    assert answer.prediction.raw == CUT, "the raw reply is kept whole"


def test_evidence_lock_carries_its_totals_reply_without_the_cut_line() -> None:
    backend = FakeSmolLM2()
    (answer,) = ASK["evidence-lock"](case("evidence-lock"), backend, Decoding(8), kit(), None)
    first, second = answer.turns
    assert first.response.text == CUT, "turn 1's record keeps the reply as the model wrote it"
    user, assistant, ask = (m.content for m in second.prompt.messages)
    assert assistant == "PERSON_A: 14\nPERSON_B: 14\nPERSON_A: 14\nPERSON_B: 14"
    assert "locked: use only them, do not recompute.\nPERSON_A: 14\nPERSON_B: 14\n" in ask
    assert answer.prediction.label == "equal"


MODEL = directory(SMOLLM2)


@pytest.mark.skipif(
    not complete(MODEL), reason=f"SmolLM2 is not prepared at {MODEL}: run `make smollm2` (or set {SMOLLM2.env})"
)
@pytest.mark.slow
def test_two_call_protocols_run_end_to_end_on_smollm2(tmp_path: Path) -> None:
    # 3 scenarios under direct-less: plain, evidence-lock (totals, then the label in the same conversation)
    # and dual-direction (two yes/no questions). Measured: see docs/cue-invariance-and-protocols.md.
    protocols = ("plain", "evidence-lock", "dual-direction")
    run = run_suite(
        tmp_path,
        "--model=smollm2-135m",
        "--limit=3",
        "--positions=end",
        "--framings=direct-less",
        f"--protocol={','.join(protocols)}",
    )
    assert run.returncode in (0, 1), run.output  # pass or fail on its numbers, never a usage error
    assert "Traceback" not in run.output
    summary = run.summary
    assert summary["status"] == "complete" and summary["cases_run"] == summary["cases_selected"] == 3
    records = run.records
    assert len(records) == 9 and {r["protocol"] or "plain" for r in records} == set(protocols)
    for r in records:  # every answer read, or kept as invalid with its text and why
        assert r["status"] in ("ok", "invalid"), r
        assert r["status"] == "ok" or (r["raw"].strip() and r["decided_by"].startswith("invalid")), r
    for protocol, turns in (("evidence-lock", ["totals", "label"]), ("dual-direction", ["more", "less"])):
        mine = [r for r in records if r["protocol"] == protocol]
        assert all([t["turn"] for t in r["turns"]] == turns for r in mine), mine[0]
        cost = summary["protocols"][protocol]
        assert (cost["items"], cost["requests"], cost["requests_per_item"]) == (3, 6, 2.0), cost
        assert cost["input_tokens_per_item"] > 0 and cost["output_tokens_per_item"] > 0
        (case,) = [c for c in summary["cases"] if c["protocol"] == protocol]
        assert case["usage"]["requests"] == 6, "the case counts both turns of its 3 items"
    for r in (r for r in records if r["protocol"] == "evidence-lock"):
        totals_turn, label_turn = r["turns"]
        assert [m["role"] for m in label_turn["messages"]] == ["user", "assistant", "user"]
        carried = label_turn["messages"][-2]["content"]
        cut = totals_turn["output_tokens"] >= TURN_TOKENS["totals-short"]
        assert carried == totals.finished(totals_turn["raw"], cut), "turn 2 carries turn 1 without a cut line"
    comparison = summary["protocol_comparison"]["cells"]
    assert set(comparison) == {"direct-less"} and set(comparison["direct-less"]) == set(protocols)
