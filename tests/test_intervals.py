"""Intervals and paired tests against values worked out by hand or by a reference formula, and the gate
key that decides which end of DirErr's interval is held to the ceiling."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mathcomp_tests.backends.models import named, resolve
from mathcomp_tests.config.thresholds import ThresholdsError, load
from mathcomp_tests.scoring import intervals, metrics, soft_paired
from mathcomp_tests.types import Prediction
from mathcomp_tests.verdict import checks as verdict

SPEC = resolve("symbolic")


def test_wilson_matches_the_textbook_values() -> None:
    low, high = intervals.wilson(5, 10)  # type: ignore[misc]
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = intervals.wilson(0, 10)  # type: ignore[misc]
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = intervals.wilson(10, 10)  # type: ignore[misc]
    assert high == 1.0 and low == pytest.approx(0.7225, abs=1e-4)
    assert intervals.wilson(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and n"):
        intervals.wilson(11, 10)


def test_wilson_narrows_like_one_over_root_n() -> None:
    widths = []
    for n in (50, 200, 800):
        low, high = intervals.wilson(n // 5, n)  # type: ignore[misc]
        widths.append(high - low)
    assert widths[0] / widths[1] == pytest.approx(2, rel=0.05)
    assert widths[1] / widths[2] == pytest.approx(2, rel=0.05)


def test_exact_mcnemar_is_the_two_sided_binomial_tail() -> None:
    assert intervals.mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert intervals.mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert intervals.mcnemar_exact(3, 3) == 1.0
    assert intervals.mcnemar_exact(0, 0) == 1.0
    b, c = 2, 12
    expected = 2 * sum(math.comb(14, i) for i in range(3)) / 2**14
    assert intervals.mcnemar_exact(b, c) == pytest.approx(expected)


def test_paired_difference_matches_the_published_square_and_add_interval() -> None:
    # Fagerland, Lydersen and Laake, Statistical Analysis of Contingency Tables (2017), chapter 8:
    # Cavo et al. (2012), table (59, 6; 16, 80): estimate -0.0621, Newcombe interval -0.1186 to -0.0046.
    d, low, high = intervals.paired_difference(59, 6, 16, 161)
    assert d == pytest.approx(-0.0621, abs=1e-4)
    assert low == pytest.approx(-0.1186, abs=1e-4) and high == pytest.approx(-0.0046, abs=1e-4)


def test_paired_difference_covers_zero_when_mcnemar_does_not_reject() -> None:
    d, low, high = intervals.paired_difference(0, 3, 0, 13)  # p = 0.25
    assert d == pytest.approx(3 / 13) and low < 0 < high
    d, low, high = intervals.paired_difference(0, 0, 0, 100)
    assert d == 0 and low < 0 < high and low == pytest.approx(-high)


def test_paired_bootstrap_agrees_with_the_closed_form_on_a_clear_rise() -> None:
    pairs = [(0, 1)] * 20 + [(1, 0)] * 5 + [(0, 0)] * 175
    d, low, high = intervals.paired_bootstrap(pairs)
    _, score_low, score_high = intervals.paired_difference(0, 20, 5, 200)
    assert d == pytest.approx(0.075)
    assert low == pytest.approx(score_low, abs=0.015) and high == pytest.approx(score_high, abs=0.015)
    assert 0 < low < d < high
    assert (d, low, high) == intervals.bootstrap_percentile(pairs)  # 25 discordant pairs: the percentile interval


def test_the_paired_bootstrap_never_claims_certainty_from_no_discordant_pair() -> None:
    # every resample of two unchanged pairs has mean 0: the percentile interval was the point [0, 0]
    assert intervals.bootstrap_percentile([(1, 1), (0, 0)]) == (0.0, 0.0, 0.0)
    d, low, high = intervals.paired_bootstrap([(1, 1), (0, 0)])
    assert (d, low, high) == intervals.paired_difference(1, 0, 0, 2)
    assert low < 0 < high


def test_cluster_bootstrap_is_wider_than_wilson_when_cases_share_scenarios() -> None:
    # 100 scenarios, each in 4 cases that all agree: 400 items but only 100 independent draws.
    clusters = {str(i): [(1 if i < 20 else 0, 1)] * 4 for i in range(100)}
    low, high = intervals.cluster_bootstrap(clusters)  # type: ignore[misc]
    wilson_low, wilson_high = intervals.wilson(80, 400)  # type: ignore[misc]
    assert low < 0.2 < high
    assert (high - low) > 1.6 * (wilson_high - wilson_low)
    assert intervals.cluster_bootstrap({}) is None


def _coverage(found: list[tuple[float, float]], truth: float) -> float:
    return sum(low <= truth <= high for low, high in found) / len(found)


def test_the_paired_bootstrap_interval_covers_when_few_pairs_changed() -> None:
    """30 pairs; the candidate copies the base 90% of the time, else answers y with probability 0.35, where
    the base does 5%: the true rise is 0.0298, from about one discordant pair in a data set."""
    rng = np.random.default_rng(5)
    cells = [0.05 * (0.9 + 0.1 * 0.35), 0.95 * 0.1 * 0.35, 0.05 * 0.1 * 0.65]
    truth = cells[1] - cells[2]
    draws = rng.choice(4, size=(300, 30), p=[*cells, 1 - sum(cells)])
    pairs = [[((1, 1), (0, 1), (1, 0), (0, 0))[x] for x in row] for row in draws]
    printed = [intervals.paired_bootstrap(p)[1:] for p in pairs]
    assert _coverage(printed, truth) >= 0.9
    assert _coverage([intervals.bootstrap_percentile(p)[1:] for p in pairs], truth) < 0.7  # what it replaced


def test_a_pooled_share_over_few_scenarios_is_covered() -> None:
    """20 scenarios in 4 cases each; a scenario's rate is Beta(0.05, 0.95) (mean 0.05, cases agree on it
    far more than chance)."""
    rng = np.random.default_rng(6)
    rates = rng.beta(0.05, 0.95, size=(300, 20))
    hits = rng.binomial(4, rates)
    clusters = [{str(i): [(int(h), 4)] for i, h in enumerate(row)} for row in hits]
    printed = [intervals.cluster_bootstrap(c) for c in clusters]
    assert _coverage([f for f in printed if f is not None], 0.05) >= 0.9
    assert _coverage([f for f in map(intervals.cluster_percentile, clusters) if f is not None], 0.05) < 0.85


def test_the_design_effect_counts_scenarios_not_items_when_cases_agree() -> None:
    agreeing = [(4, 4)] * 10 + [(0, 4)] * 90  # 100 scenarios, 4 cases each, always the same answer
    low, high = intervals.design_effect_wilson(agreeing)
    t_low, t_high = intervals.wilson(10, 100, z=intervals.t_quantile(0.975, 99))  # type: ignore[misc]
    assert (low, high) == pytest.approx((t_low, t_high))
    independent = [(1, 4)] * 50 + [(0, 4)] * 50  # spread no wider than a binomial's: all 400 items count
    low, high = intervals.design_effect_wilson(independent)
    w_low, w_high = intervals.wilson(50, 400)  # type: ignore[misc]
    assert high - low == pytest.approx(w_high - w_low, rel=0.02)
    assert intervals.design_effect_wilson([(0, 4)] * 10)[0] == 0.0


def test_the_soft_interval_and_its_p_value_agree_at_every_n() -> None:
    """The soft test prints a 95% interval beside a one-sided p: its low end is above 0 exactly when p is
    below 0.025. A consistent lean of 13.6 points on 27 pairs (40 scenarios, one label) was printed with an
    interval reaching below 0 beside p = 1e-17."""
    rng = np.random.default_rng(43)
    base = rng.uniform(0.2, 0.6, 27)
    leaned = base + 0.136 + rng.normal(0, 0.02, 27)
    lean = soft_paired.change("less", [f"s{i}" for i in range(27)], base.tolist(), leaned.tolist(), 0.1, 0.05)
    assert lean.p_value < 1e-10 and lean.low is not None and lean.low > 0.1
    for n in (2, 3, 5, 10, 27, 49, 50, 120):
        for shift in (-0.05, 0.0, 0.02, 0.05, 0.2):
            for _ in range(20):
                b = rng.uniform(0, 1, n)
                c = np.clip(b + shift + rng.normal(0, 0.15, n), 0, 1)
                found = soft_paired.change(
                    "more", [f"s{i}" for i in range(n)], b.tolist(), c.tolist(), 0.0, 0.05
                )
                assert found.low is not None
                assert (found.low > 0) == (found.p_value < 0.025), (n, shift, found.low, found.p_value)


def test_holm_steps_down_and_stops_at_the_first_non_rejection() -> None:
    assert intervals.holm([0.01, 0.04, 0.03, 0.005], alpha=0.05) == [True, False, False, True]
    assert intervals.holm([0.001, 0.012, 0.02]) == [True, True, True]
    assert intervals.holm([]) == []


def _scores(hits_more: int, n: int) -> metrics.Scores:
    golds = ["less"] * n
    preds = [Prediction("more", "ok", "more")] * hits_more + [Prediction("less", "ok", "less")] * (
        n - hits_more
    )
    return metrics.score(golds, preds)  # type: ignore[arg-type]


def test_scores_carry_a_wilson_interval_per_label() -> None:
    scores = _scores(5, 10)
    assert scores.dir_err["more"] == 0.5
    assert scores.dir_err_ci is not None
    assert scores.dir_err_ci["more"] == intervals.wilson(5, 10)
    assert scores.dir_err_ci["less"] is None  # every item has gold "less": no denominator


@pytest.mark.parametrize(
    ("gate", "hits", "fails"),
    [
        ("point", 25, True),  # 0.25 > 0.20
        ("lower", 25, False),  # interval [0.16, 0.37] still reaches under 0.20
        ("lower", 40, True),  # [0.31, 0.50]: the whole interval is above
        ("upper", 15, True),  # 0.15 but the interval reaches 0.23
        ("upper", 10, False),  # [0.055, 0.174]
        ("point", 15, False),
    ],
)
def test_gate_chooses_which_end_of_the_interval_meets_the_ceiling(
    tmp_path: Path, gate: str, hits: int, fails: bool
) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text(
        f'[default]\ndir_err = 0.20\ninvalid_rate = 0.1\nerror_rate = 0.0\n\n[framing.neutral]\ngate = "{gate}"\n'
    )
    ceilings = load(path, named).for_case(SPEC, "neutral")
    assert ceilings.gate == gate
    assert load(path, named).for_case(SPEC, "direct-more").gate == "point"
    assert ("DirErr(more)" in verdict.breaches(_scores(hits, 100), ceilings)) is fails


def test_max_increase_resolves_by_label_and_defaults_when_unset(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text(
        "[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\nmax_increase = 0.03\n\n"
        "[framing.indirect-more]\nmax_increase = { more = 0.10 }\n"
    )
    thresholds = load(path, named)
    assert thresholds.for_case(SPEC, "indirect-more").max_increase == {
        "less": 0.03,
        "more": 0.10,
        "equal": 0.03,
    }
    bare = tmp_path / "bare.toml"
    bare.write_text("[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\n")
    ceilings = load(bare, named).for_case(SPEC, "neutral")
    assert ceilings.gate == "point" and set(ceilings.max_increase.values()) == {0.05}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('gate = "middle"', r"default\.gate = 'middle'; expected one of 'point', 'lower', 'upper'"),
        ("max_increase = 2", r"default\.max_increase = 2; expected a number between 0 and 1"),
        ("max_increase = { most = 0.1 }", r"default\.max_increase\.most: expected a label"),
    ],
)
def test_bad_gate_or_max_increase_names_the_key(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text(f"[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\n{line}\n")
    with pytest.raises(ThresholdsError, match=message):
        load(path, named)


def test_the_failure_message_shows_the_interval_and_the_gated_end(tmp_path: Path) -> None:
    from mathcomp_tests.types import Condition
    from mathcomp_tests.verdict.explain import explanation
    from mathcomp_tests.verdict.result import CaseResult

    path = tmp_path / "thresholds.toml"
    path.write_text('[default]\ndir_err = 0.20\ninvalid_rate = 0.1\nerror_rate = 0.0\ngate = "lower"\n')
    ceilings = load(path, named).for_case(SPEC, "neutral")
    result = CaseResult(Condition("neutral", "end"), "m", "", (), _scores(40, 100), ceilings, sent=0)
    text = explanation(result)
    assert "gate: the lower end of the 95% interval is held to the ceiling" in text
    assert "DirErr(more ) = 0.400, lower end 0.309 > 0.200   95% CI [0.309, 0.498]   (40/100 items" in text


def test_student_t_matches_the_tables() -> None:
    assert intervals.t_quantile(0.975, 19) == pytest.approx(2.093024, abs=1e-6)
    assert intervals.t_quantile(0.975, 9) == pytest.approx(2.262157, abs=1e-6)
    assert intervals.t_upper_tail(2.093024, 19) == pytest.approx(0.025, abs=1e-7)
    assert intervals.t_upper_tail(0.0, 5) == 0.5
