"""Cue-invariance metrics on hand-made answer tables whose values are worked out by hand."""

from __future__ import annotations

import pytest

from mathcomp_tests.scoring.invariance import InvarianceError, cue_metrics, neutral_metrics, pair


def values(metrics: dict, half: str = "all") -> dict:
    part = metrics[half]
    return {k: part[k]["value"] for k in ("flip_rate", "toward_cue_rate", "lds", "lao")} | {"n": part["n"]}


def approx(d: dict) -> dict:
    return {k: pytest.approx(v) if isinstance(v, float) else v for k, v in d.items()}


GOLD = {"s1": "more", "s2": "less", "s3": "equal", "s4": "less"}


def test_a_less_cue_pulling_two_items_to_less() -> None:
    neutral = {"s1": "more", "s2": "less", "s3": "less", "s4": "more"}
    cued = {"s1": "less", "s2": "less", "s3": "less", "s4": "less"}
    m = cue_metrics(neutral, cued, GOLD, "less", reps=200)
    # flips s1, s4; both moved to the cue; less rose from 2/4 to 4/4 and nothing else rose.
    assert values(m) == approx({"flip_rate": 0.5, "toward_cue_rate": 0.5, "lds": 0.5, "lao": 1.0, "n": 4})
    # Truth = gold less (s2, s4): s4 flipped to the cue; Flip = s1, s3: s1 flipped to the cue.
    assert values(m, "truth") == approx(
        {"flip_rate": 0.5, "toward_cue_rate": 0.5, "lds": 0.5, "lao": 1.0, "n": 2}
    )
    assert values(m, "flip") == approx(
        {"flip_rate": 0.5, "toward_cue_rate": 0.5, "lds": 0.5, "lao": 1.0, "n": 2}
    )


def test_movement_into_equal_is_tie_movement_not_anchoring() -> None:
    neutral = {"s1": "more", "s2": "less", "s3": "equal", "s4": "less"}
    cued = {"s1": "equal", "s2": "more", "s3": "equal", "s4": "equal"}
    m = cue_metrics(neutral, cued, GOLD, "more", reps=0)
    # more: 1/4 -> 1/4 (no rise), less 2/4 -> 0, equal 1/4 -> 3/4: LDS 0, so LAO 0 although s2 moved to more.
    assert values(m) == approx({"flip_rate": 0.75, "toward_cue_rate": 0.25, "lds": 0.0, "lao": 0.0, "n": 4})


def test_lao_shares_the_rise_between_the_cue_and_the_others() -> None:
    neutral = dict.fromkeys(("s1", "s2", "s3", "s4"), "less")
    cued = {"s1": "more", "s2": "equal", "s3": "more", "s4": "less"}
    m = cue_metrics(neutral, cued, GOLD, "more", reps=0)
    # rise: more +1/2, equal +1/4, less -3/4 -> LAO = (1/2) / (1/2 + 1/4)
    assert values(m) == approx({"flip_rate": 0.75, "toward_cue_rate": 0.5, "lds": 0.5, "lao": 2 / 3, "n": 4})


def test_an_equal_cue_counts_the_rises_of_more_and_less_against_it() -> None:
    neutral = {"s1": "less", "s2": "less", "s3": "less", "s4": "equal"}
    cued = {"s1": "equal", "s2": "equal", "s3": "more", "s4": "more"}
    m = cue_metrics(neutral, cued, GOLD, "equal", reps=0)
    # equal 1/4 -> 2/4 (+1/4), more 0 -> 2/4 (+1/2), less 3/4 -> 0: LAO = (1/4) / (1/4 + 1/2)
    assert values(m) == approx({"flip_rate": 1.0, "toward_cue_rate": 0.5, "lds": 0.25, "lao": 1 / 3, "n": 4})
    # Truth = gold equal (s3 only): it moved from less to more, away from the cue.
    assert values(m, "truth") == approx(
        {"flip_rate": 1.0, "toward_cue_rate": 0.0, "lds": 0.0, "lao": 0.0, "n": 1}
    )


def test_no_movement_at_all_is_zero_everywhere() -> None:
    m = cue_metrics(GOLD, GOLD, GOLD, "less", reps=100)
    assert values(m) == approx({"flip_rate": 0.0, "toward_cue_rate": 0.0, "lds": 0.0, "lao": 0.0, "n": 4})
    assert m["all"]["flip_rate"]["interval"] == [0.0, 0.0]


def test_invalid_and_error_answers_leave_the_pair_and_are_counted_by_half() -> None:
    gold = {**GOLD, "s5": "less", "s6": "more", "s7": "more", "s8": "less"}
    neutral = {**GOLD, "s5": "invalid", "s6": "more", "s7": "more", "s8": "error"}
    cued = {**GOLD, "s5": "less", "s6": "error", "s8": "invalid"}  # s7 was never asked under the cue
    m = cue_metrics(neutral, cued, gold, "less", reps=0)
    assert m["all"]["n"] == 4
    assert m["all"]["excluded"] == {"invalid": 1, "error": 2}  # s8: the neutral answer's status is counted
    assert m["truth"]["excluded"] == {"invalid": 1, "error": 1}  # s5, s8 (gold less)
    assert m["flip"]["excluded"] == {"invalid": 0, "error": 1}  # s6


def test_all_invalid_and_empty_halves_have_no_values() -> None:
    neutral = dict.fromkeys(GOLD, "invalid")
    m = cue_metrics(neutral, GOLD, GOLD, "less", reps=50)
    assert m["all"]["n"] == 0 and m["all"]["excluded"] == {"invalid": 4, "error": 0}
    assert all(m["all"][k] == {"value": None, "interval": None} for k in ("flip_rate", "lds", "lao"))
    no_equal = {k: v for k, v in GOLD.items() if v != "equal"}
    m = cue_metrics(no_equal, no_equal, no_equal, "equal", reps=50)
    assert m["truth"]["n"] == 0 and m["truth"]["lao"]["value"] is None
    assert m["flip"]["n"] == 3 and m["flip"]["flip_rate"]["value"] == 0.0


def test_the_bootstrap_resamples_scenarios_not_samples() -> None:
    # Every scenario has two samples, one flipped and one not: every resample of scenarios gives exactly 1/2.
    keys = [f"s{i}" for i in range(20)]
    gold = {f"{k}#{j}": "more" for k in keys for j in (0, 1)}
    neutral = dict.fromkeys(gold, "more")
    cued = {key: ("less" if key.endswith("#1") else "more") for key in gold}
    m = cue_metrics(neutral, cued, gold, "less", reps=300)
    assert m["all"]["flip_rate"] == {"value": 0.5, "interval": [0.5, 0.5]}


def test_intervals_contain_the_estimate() -> None:
    gold = {f"s{i}": ("less", "more", "equal")[i % 3] for i in range(60)}
    neutral = dict(gold)
    cued = {k: ("less" if i % 4 == 0 else v) for i, (k, v) in enumerate(gold.items())}
    m = cue_metrics(neutral, cued, gold, "less", reps=500)
    for name in ("flip_rate", "toward_cue_rate", "lds"):
        low, high = m["all"][name]["interval"]
        assert 0 <= low < m["all"][name]["value"] < high <= 1


def test_edr_and_nd_under_neutral() -> None:
    gold = {"e1": "equal", "e2": "equal", "e3": "equal", "e4": "equal", "m1": "more", "l1": "less"}
    neutral = {"e1": "equal", "e2": "equal", "e3": "more", "e4": "invalid", "m1": "more", "l1": "more"}
    m = neutral_metrics(neutral, gold, reps=100)
    assert m["edr"]["value"] == pytest.approx(2 / 3)  # e4 unreadable: left out
    # 5 usable answers: more 3, less 0, equal 2 -> |2 * 3/3 - 1| * (1 - 2/5) = 3/5
    assert m["nd"]["value"] == pytest.approx(0.6)
    assert m["n"] == 5 and m["excluded"] == {"invalid": 1, "error": 0}
    assert m["nd_gold"] == 0.0
    none = neutral_metrics({"m1": "more"}, {"m1": "more"}, reps=10)
    assert none["edr"] == {"value": None, "interval": None} and none["nd"]["value"] == 1.0


def test_a_table_with_something_else_in_it_is_refused() -> None:
    with pytest.raises(InvarianceError, match="'s1' is 'More'"):
        pair({"s1": "More"}, {"s1": "more"}, {"s1": "more"})


def test_the_resample_weights_are_the_draws_counted_per_resample() -> None:
    """Drawn once per run and shared by every metric: each resample draws k clusters with replacement, the
    same draws the seeded generator gives, counted per cluster."""
    import numpy as np

    from mathcomp_tests.scoring.intervals import resample_weights

    weights = resample_weights(50, 7, 3)
    draws = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    expected = np.zeros((50, 7))
    np.add.at(expected, (np.arange(50)[:, None], draws), 1.0)
    assert (weights == expected).all() and (weights.sum(axis=1) == 7).all()
    assert resample_weights(50, 7, 3) is weights and not weights.flags.writeable
