"""The end-of-run table's notes: a neutral case answered no better than a constant answer is named."""

from __future__ import annotations

from typing import Any

from mathcomp_tests.plugin.terminal import chance_notes


def _case(framing: str, correct: dict[str, int]) -> dict[str, Any]:
    golds = {"less": 40, "more": 29, "equal": 31}
    confusion = {y: {y: correct[y], "invalid": golds[y] - correct[y]} for y in golds}
    return {
        "case": f"{framing}-begin-std-one-word",
        "framing": framing,
        "scores": {"n": 100, "confusion": confusion, "accuracy": sum(correct.values()) / 100},
    }


def test_a_neutral_case_at_the_share_of_the_commonest_label_is_called_at_chance() -> None:
    always_less = _case("neutral", {"less": 40, "more": 0, "equal": 0})
    (note,) = chance_notes([always_less])
    assert note.startswith("AT CHANCE: neutral-begin-std-one-word") and "'less' (40.0%)" in note


def test_better_than_any_constant_answer_or_a_cue_framing_gets_no_note() -> None:
    learned = _case("neutral", {"less": 30, "more": 10, "equal": 5})
    cued = _case("direct-more", {"less": 0, "more": 29, "equal": 0})
    assert chance_notes([learned, cued]) == []
