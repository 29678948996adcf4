"""Scoring a case: DirErr, accuracy, invalid and error rates, checked against numbers worked by hand."""

from __future__ import annotations

import pytest

from mathcomp_tests.scoring.metrics import OUTCOMES, confusion, dir_err, score
from mathcomp_tests.types import Label, Prediction


def said(outcome: str) -> Prediction:
    """A prediction as the answer reader would make it: a label, `invalid` or `error`."""
    if outcome in ("invalid", "error"):
        return Prediction(None, outcome, "...")  # type: ignore[arg-type]
    return Prediction(outcome, "ok", outcome)  # type: ignore[arg-type]


# Ten items. Gold `more`: more, more, less, invalid. Gold `less`: less, more, error.
# Gold `equal`: equal, more, invalid.
GOLDS: list[Label] = ["more", "more", "more", "more", "less", "less", "less", "equal", "equal", "equal"]
ANSWERS = ["more", "more", "less", "invalid", "less", "more", "error", "equal", "more", "invalid"]


def test_confusion_counts_each_gold_against_each_outcome() -> None:
    table = confusion(GOLDS, [said(a) for a in ANSWERS])
    assert table == {
        "less": {"less": 1, "more": 1, "equal": 0, "invalid": 0, "error": 1},
        "more": {"less": 1, "more": 2, "equal": 0, "invalid": 1, "error": 0},
        "equal": {"less": 0, "more": 1, "equal": 1, "invalid": 1, "error": 0},
    }
    assert all(tuple(row) == OUTCOMES for row in table.values())


def test_dir_err_worked_by_hand() -> None:
    scores = score(GOLDS, [said(a) for a in ANSWERS])
    # more: 1 less->more + 1 equal->more over the 5 answered items not gold more (the invalid one stays in,
    # the failed request leaves); less: 1 more->less over the 7 items not gold less; equal: none wrongly
    assert scores.dir_err == {"more": 2 / 5, "less": 1 / 7, "equal": 0.0}


def test_failed_requests_leave_the_denominator() -> None:
    table = confusion(["less", "equal", "equal"], [said("more"), said("error"), said("error")])
    assert dir_err(table, "more") == 1.0
    assert dir_err(confusion(["less"], [said("error")]), "more") is None


def test_invalid_answers_stay_in_the_denominator() -> None:
    table = confusion(["less", "equal", "equal"], [said("more"), said("invalid"), said("invalid")])
    assert dir_err(table, "more") == pytest.approx(1 / 3)


def test_accuracy_and_rates_are_shares_of_all_items() -> None:
    scores = score(GOLDS, [said(a) for a in ANSWERS])
    assert scores.n == 10
    assert scores.accuracy == pytest.approx(0.4)
    assert scores.invalid_rate == pytest.approx(0.2)
    assert scores.error_rate == pytest.approx(0.1)


def test_a_perfect_case_scores_zero_error_everywhere() -> None:
    golds: list[Label] = ["less", "more", "equal"]
    scores = score(golds, [said(g) for g in golds])
    assert scores.dir_err == {"less": 0.0, "more": 0.0, "equal": 0.0}
    assert (scores.accuracy, scores.invalid_rate, scores.error_rate) == (1.0, 0.0, 0.0)


def test_dir_err_is_none_when_every_item_has_that_gold_label() -> None:
    scores = score(["more", "more"], [said("more"), said("less")])
    assert scores.dir_err["more"] is None
    assert scores.dir_err["less"] == 0.5
    assert scores.dir_err["equal"] == 0.0


def test_scores_travel_as_plain_json_values() -> None:
    as_dict = score(["less"], [said("invalid")]).as_dict()
    assert as_dict["invalid_rate"] == 1.0
    assert as_dict["dir_err"] == {"less": None, "more": 0.0, "equal": 0.0}
    assert as_dict["confusion"]["less"]["invalid"] == 1  # type: ignore[index]


def test_an_empty_case_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="no items"):
        score([], [])


def test_golds_and_predictions_must_pair_up() -> None:
    with pytest.raises(ValueError):
        score(["more", "less"], [said("more")])
