"""The paired baseline tests at nightly scale: a real rise is still found when Holm tests each of 1,000
cases' three labels at 0.05 / 3000, by either --paired-test, and a case that did not change is not."""

from __future__ import annotations

import json
import math
from typing import Any

import mpmath
import pytest

from mathcomp_tests.run.comparison import holm_failures
from mathcomp_tests.scoring import intervals, paired

LIMITS = dict.fromkeys(("less", "more", "equal"), 0.05)
CASES = 1000
PER_TEST = paired.ALPHA / (3 * CASES)
IDS = [str(i) for i in range(240)]
GOLDS = {s: ("more" if i < 180 else "less") for i, s in enumerate(IDS)}
"""180 pairs for DirErr(less); 60 scenarios of gold less give DirErr(more) and DirErr(equal) pairs too."""


def _answers(less: range) -> dict[str, str]:
    """Every scenario answered with its gold, except those of gold more in ``less``."""
    return {s: ("less" if i in less else GOLDS[s]) for i, s in enumerate(IDS)}


def _rise() -> tuple[dict[str, str], dict[str, str]]:
    """DirErr(less) 0.10 -> 0.30 on 180 pairs: 40 newly answered less, 4 no longer (+0.2)."""
    return _answers(range(0, 18)), _answers(range(4, 58))


def _no_change() -> tuple[dict[str, str], dict[str, str]]:
    """DirErr(less) 0.20 both times, with 12 answers moving each way."""
    return _answers(range(0, 36)), _answers(range(12, 48))


@pytest.mark.parametrize("method", paired.METHODS)
def test_a_true_rise_on_180_pairs_is_found_at_the_per_test_level_of_1000_cases(method: str) -> None:
    base, cand = _rise()
    change = paired.compare(GOLDS, cand, base, LIMITS, method=method, alpha=PER_TEST).changes["less"]
    assert (change.pairs, change.rose, change.fell) == (180, 40, 4)
    assert change.difference == pytest.approx(0.2)
    assert change.p_value < PER_TEST and change.significant and change.breach
    assert change.low is not None and change.low > 0.1
    base, cand = _no_change()
    same = paired.compare(GOLDS, cand, base, LIMITS, method=method, alpha=PER_TEST).changes["less"]
    assert (same.rose, same.fell, same.difference) == (12, 12, 0)
    assert same.p_value == pytest.approx(intervals.mcnemar_rise(12, 12)) and same.p_value > 0.5
    assert not same.significant and not same.breach


@pytest.mark.parametrize("method", paired.METHODS)
def test_holm_over_1000_cases_finds_the_one_rise_and_nothing_else(method: str) -> None:
    def case(name: str, answers: tuple[dict[str, str], dict[str, str]]) -> dict[str, Any]:
        base, cand = answers
        comparison = paired.compare(GOLDS, cand, base, LIMITS, method=method)
        return {"case": name, "baseline": json.loads(json.dumps(comparison.as_dict()))}

    quiet = case("quiet", _no_change())
    cases = [case("risen", _rise())] + [
        {"case": f"quiet-{n}", "baseline": json.loads(json.dumps(quiet["baseline"]))}
        for n in range(CASES - 1)
    ]
    tested = [(c["case"], y, ch) for c in cases for y, ch in c["baseline"]["changes"].items()]
    assert len(tested) == 3 * CASES
    holm_failures(cases)
    found = [(name, y) for name, y, ch in tested if ch["holm_significant"]]
    assert found == [("risen", "less")]


@pytest.mark.parametrize(("b", "c"), [(4, 40), (0, 1000), (3, 700), (300, 700), (499, 501), (0, 1)])
def test_exact_mcnemar_keeps_full_precision_far_into_the_tail(b: int, c: int) -> None:
    n = b + c
    with mpmath.workdps(60):
        reference = min(
            1, 2 * mpmath.fsum(mpmath.binomial(n, i) for i in range(min(b, c) + 1)) / mpmath.power(2, n)
        )
    p = intervals.mcnemar_exact(b, c)
    assert p > 0 and p == pytest.approx(float(reference), rel=1e-12)


def test_the_bootstrap_p_value_is_not_floored_at_one_over_the_resamples() -> None:
    pairs = [(0, 1)] * 40 + [(1, 0)] * 4 + [(1, 1)] * 14 + [(0, 0)] * 122
    base, cand = _rise()
    change = paired.compare(GOLDS, cand, base, LIMITS, method="bootstrap").changes["less"]
    assert change.p_value < 1 / intervals.BOOTSTRAP_REPS / 1000
    assert change.p_value == pytest.approx(intervals.mcnemar_rise(40, 4), rel=1e-12)
    assert math.isclose(change.difference or 0, sum(c - b for b, c in pairs) / len(pairs))


def test_exact_mcnemar_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="must not be negative, got -1 and 3"):
        intervals.mcnemar_exact(-1, 3)
