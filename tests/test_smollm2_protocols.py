"""The protocols on what SmolLM2-135M-Instruct really writes.

Asked for "exactly two lines", SmolLM2 writes its two totals, then repeats them until the 48-token budget
cuts it mid-number (`PERSON_A: 14\\nPERSON_B: 14\\nPERSON_A: 14\\nPERSON_B: 14\\nPERSON_A: 1`, scenario 104,
greedy). The replies below are its own, recorded from `--model=smollm2-135m --protocol=symbolic`; a fake
replays them where the model folder is missing. The end-to-end check against the model itself is in
test_smollm2_suite_protocols.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from helpers.suite_runner import REPO

from mathcomp_tests import prompts
from mathcomp_tests.backends.base import OnResponse
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.protocols import ASK, Kit, load_texts
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
