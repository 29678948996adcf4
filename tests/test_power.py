"""The power of the baseline gate's one-sided McNemar rise test: hand-checked small cases, the exact
binomial tails it rests on, monotonicity, and a simulation of the test itself."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from mathcomp_tests.scoring import intervals
from mathcomp_tests.scoring.power import POWER, RisePower, detection_probability, rise_power


def exact_tail(free: int, needed: int, q: Fraction) -> Fraction:
    """P(Binomial(free, q) >= needed), in fractions."""
    return sum(
        (math.comb(free, k) * q**k * (1 - q) ** (free - k) for k in range(needed, free + 1)), Fraction(0)
    )


def brute_needed(pairs: int, base_hits: int, away: int, level: float, max_increase: float) -> int | None:
    """The gate's own rule, item count by item count: the fewest newly-y items that breach."""
    for rose in range(1, pairs - base_hits + 1):
        if intervals.mcnemar_rise(rose, away) < level and (rose - away) / pairs > max_increase:
            return rose
    return None


def test_24_pairs_with_a_base_that_never_answers_y_need_5_new_answers() -> None:
    found = rise_power(24, 0, max_increase=0.05, level=0.05)
    assert 0.5**5 < 0.05 < 0.5**4 and 5 / 24 > 0.05  # the one-sided test: 5 of 5 discordant pairs rose
    assert (found.needed, found.free, found.away) == (5, 24, 0)
    assert found.mde is not None
    # power = P(Binomial(24, d) >= 5): the MDE is the first tenth of a point where it reaches 80%
    assert exact_tail(24, 5, Fraction(round(found.mde * 1000), 1000)) >= Fraction(4, 5)
    assert exact_tail(24, 5, Fraction(round(found.mde * 1000) - 1, 1000)) < Fraction(4, 5)
    assert found.mde == 0.265
    assert found.text("less") == "sees a rise of +26.5 points (80% power)"


def test_a_base_that_already_answers_y_on_22_of_24_leaves_no_room_to_rise() -> None:
    found = rise_power(24, 22, max_increase=0.05, level=0.05)
    assert (found.needed, found.mde, found.free) == (None, None, 2)
    assert found.text("less") == "cannot rise: the base already answers less on 22 of 24"
    assert detection_probability(24, 22, 0.08, 0.05, 0.05) == 0.0


def test_too_few_pairs_and_no_pairs_say_so() -> None:
    assert rise_power(4, 0, 0.05, 0.05).text("more") == (
        "cannot rise: 4 items are too few for a significant rise at level 0.05"
    )
    assert rise_power(0, 0, 0.05, 0.05).text("more") == "cannot rise: no items to compare"


def test_the_rise_must_be_above_max_increase_not_at_it() -> None:
    assert rise_power(100, 0, max_increase=0.05, level=0.05).needed == 6  # 5/100 is not above 0.05


def test_items_moving_off_y_make_the_test_need_more() -> None:
    # 5 leave y: 12 rose gives p = P(Bin(17, 1/2) >= 12) = 9402/131072 = 0.072; 13 gives 12616/262144 = 0.048
    assert intervals.mcnemar_rise(12, 5) == pytest.approx(9402 / 2**17)
    assert intervals.mcnemar_rise(13, 5) == pytest.approx(12616 / 2**18)
    assert rise_power(100, 20, max_increase=0.05, level=0.05, away=5).needed == 13


@pytest.mark.parametrize(
    ("pairs", "base_hits", "away", "level", "max_increase"),
    [
        (24, 0, 0, 0.05, 0.05),
        (60, 12, 3, 0.05, 0.0),
        (60, 12, 12, 0.01, 0.05),
        (180, 30, 10, 0.05 / 42, 0.05),
        (200, 40, 25, 0.05 / 3000, 0.03),
        (200, 196, 0, 0.05, 0.05),
        (7, 0, 0, 0.01, 0.05),
        (40, 10, 0, 1.0, 0.1),
    ],
)
def test_needed_is_the_gates_own_rule_item_by_item(
    pairs: int, base_hits: int, away: int, level: float, max_increase: float
) -> None:
    found = rise_power(pairs, base_hits, max_increase, level, away=away)
    assert found.needed == brute_needed(pairs, base_hits, away, level, max_increase)
    assert (found.mde is None) == (found.needed is None)


def test_a_p_value_at_the_level_itself_is_not_significant() -> None:
    # mcnemar_rise(5, 0) = 1/32 exactly: at level 1/32 five new answers are not enough, six are
    assert rise_power(24, 0, 0.05, level=1 / 32).needed == 6
    assert rise_power(24, 0, 0.05, level=1 / 32 + 1e-15).needed == 5


@pytest.mark.parametrize(("pairs", "base_hits", "away"), [(24, 0, 0), (60, 12, 4), (200, 40, 10)])
def test_detection_probability_is_the_exact_binomial_tail(pairs: int, base_hits: int, away: int) -> None:
    found = rise_power(pairs, base_hits, 0.05, 0.05, away=away)
    assert found.needed is not None
    free = pairs - base_hits
    for rise in (0.06, 0.1, 0.15):
        q = (Fraction(rise).limit_denominator(1000) * pairs + away) / free
        got = detection_probability(pairs, base_hits, rise, 0.05, 0.05, away=away)
        assert got == pytest.approx(float(exact_tail(free, found.needed, q)), rel=1e-10, abs=1e-300)


def test_the_mde_shrinks_with_more_pairs_and_grows_at_a_lower_level() -> None:
    def mde(pairs: int, level: float, away_share: float = 0.0) -> float:
        hits = pairs // 5
        found = rise_power(pairs, hits, 0.05, level, away=round(away_share * hits))
        assert found.mde is not None
        return found.mde

    sizes = [mde(n, 0.05) for n in (30, 100, 300, 1000, 3000)]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    assert sizes[-1] > 0.05  # never below max_increase: a breach needs more than it
    for n in (100, 300, 1000):  # with answers moving both ways, the level matters
        levels = [mde(n, level, away_share=0.5) for level in (0.05, 0.05 / 42, 0.05 / 3000)]
        assert levels == sorted(levels) and levels[0] < levels[-1]
    assert mde(30, 0.05) < mde(30, 0.05 / 42)


def test_power_reaches_one_when_every_free_item_rises() -> None:
    assert detection_probability(24, 0, 1.0, 0.05, 0.05) == 1.0
    assert detection_probability(24, 0, 0.0, 0.05, 0.05) == 0.0


def test_the_power_and_mde_agree_with_a_simulation_of_the_test() -> None:
    """Item by item: the base answers y on the first ``hits`` pairs, ``away`` of them stop, each other
    item is newly answered y with probability q; the gate's own rule decides each simulated run."""
    rng = np.random.default_rng(7)
    pairs, hits, away, level, limit, runs = 150, 30, 6, 0.05 / 42, 0.05, 4000
    found = rise_power(pairs, hits, limit, level, away=away)
    assert found.mde is not None
    for rise in (found.mde - 0.03, found.mde, found.mde + 0.03):
        q = (rise * pairs + away) / (pairs - hits)
        base = np.zeros((runs, pairs), dtype=bool)
        base[:, :hits] = True
        cand = base.copy()
        cand[:, :away] = False
        cand[:, hits:] = rng.random((runs, pairs - hits)) < q
        rose = (cand & ~base).sum(axis=1)
        fell = (base & ~cand).sum(axis=1)
        breach = [
            intervals.mcnemar_rise(int(r), int(f)) < level and (r - f) / pairs > limit
            for r, f in zip(rose, fell, strict=True)
        ]
        simulated = sum(breach) / runs
        expected = detection_probability(pairs, hits, rise, limit, level, away=away)
        assert simulated == pytest.approx(
            expected, abs=4 * math.sqrt(expected * (1 - expected) / runs) + 0.005
        )
    assert detection_probability(pairs, hits, found.mde, limit, level, away=away) >= POWER


def test_as_dict_is_plain_json_without_the_label() -> None:
    found = rise_power(24, 0, 0.05, 0.05)
    data = json.loads(json.dumps(found.as_dict()))
    assert data == {
        "pairs": 24,
        "base_hits": 0,
        "away": 0,
        "level": 0.05,
        "max_increase": 0.05,
        "needed": 5,
        "mde": 0.265,
        "power": 0.8,
        "free": 24,
    }
    assert isinstance(found, RisePower)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((10, 11, 0.05, 0.05), "base_hits must be between 0 and pairs=10, got 11"),
        ((10, 2, 0.05, 0.05, 3), "away must be between 0 and base_hits=2, got 3"),
        ((10, 2, 0.05, 0.0), "level must be above 0"),
        ((10, 2, 1.5, 0.05), "max_increase must be between 0 and 1"),
    ],
)
def test_impossible_counts_are_refused(args: tuple[float, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rise_power(*args)  # type: ignore[arg-type]


def test_scenarios_for_is_the_first_size_at_which_the_rise_is_seen() -> None:
    from mathcomp_tests.scoring.power import at_scale, largest_rise, scenarios_for

    def seen(n: int) -> float:
        pairs, hits, away = at_scale(2 / 3, 0.3, 0.1, n)
        return detection_probability(pairs, hits, 0.1, 0.05, 0.05 / 42, away)

    needed = scenarios_for(2 / 3, 0.3, 0.1, 0.05, 0.05 / 42, churn=0.1)
    assert needed is not None and seen(needed) >= POWER > seen(needed - 1)
    assert at_scale(2 / 3, 0.3, 0.1, 300) == (200, 60, 6)
    assert scenarios_for(2 / 3, 0.3, 0.05, 0.05, 0.05) is None  # not above max_increase: never a breach
    assert largest_rise(0.92) == pytest.approx(0.08)
    assert scenarios_for(2 / 3, 0.92, 0.1, 0.05, 0.05) is None  # the free 8% cannot make +10 points
    assert scenarios_for(2 / 3, 0.92, 0.07, 0.05, 0.05) is not None
