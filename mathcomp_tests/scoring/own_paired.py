"""Did a project's own check rise over the base's, beyond noise? The paired test of a ``Check`` that can
recompute its value (``Check.measure``: the value from a case's scores and its neutral partner's).

Both sides are measured on the same scenarios: the candidate's case and neutral partner against the base's.
Under no change the two models are exchangeable scenario by scenario, so the test swaps each scenario's
pair of outcomes (case and neutral together) between the sides, every way when few scenarios differ
(exactly), else 1,000 seeded random ways, and recomputes the difference of the two values: the share of
swaps whose difference is at least the observed one is the one-sided p of a rise (a paired randomization
test: for a count it is McNemar's exact sign test, so three items moving the same way give p = 1/8, not a
rise). A check rises when that rise is significant at the case's level and above ``max_increase``, as a
built-in test. Power: the smallest true rise it finds with 80% power, reading the spread of the swapped
differences (``se``): it breaches above ``c = max(max_increase, z(1 - level) * se)``, so it sees
``c + z(0.8) * se``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from ..types import LABELS
from . import metrics
from .power import POWER, sees

EXACT_UP_TO = 10
"""Scenarios that differ between the sides up to which every swap is tried (2^10 of them)."""
DRAWS = 1000
"""Random swaps beyond that: p is resolved to about a thousandth."""
SEED = 0
Measure = Callable[[metrics.Scores, metrics.Scores], float | None]
"""A check's value from a case's scores and its neutral partner's."""


@dataclass(frozen=True)
class Side:
    """One run's outcomes (scenario -> less, more, equal, invalid or error) on the case and its neutral
    partner."""

    case: Mapping[str, str]
    neutral: Mapping[str, str]


def outcome_scores(golds: Sequence[str], outcomes: Sequence[str]) -> metrics.Scores:
    """Scores of items from their golds and outcomes (an outcome that is no label is unread or failed)."""
    return metrics.from_table(_table(golds, outcomes))


def _table(golds: Sequence[str], outcomes: Sequence[str]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {g: dict.fromkeys(metrics.OUTCOMES, 0) for g in LABELS}
    for gold, outcome in zip(golds, outcomes, strict=True):
        table[gold][outcome] += 1
    return table


def _value(measure: Measure, case: dict[str, dict[str, int]], neutral: dict[str, dict[str, int]]) -> float | None:
    value = measure(metrics.from_table(case), metrics.from_table(neutral))
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def rise(
    name: str,
    measure: Measure,
    golds: Mapping[str, str],
    candidate: Side,
    base: Side,
    limit: float,
    alpha: float,
) -> dict[str, Any] | None:
    """The paired test of ``name``'s value, as summary.json keeps it; None when either side has no value on
    the scenarios both answered (the measure gave none)."""
    ids = [s for s in golds if all(s in m for m in (candidate.case, candidate.neutral, base.case, base.neutral))]
    if not ids:
        return None
    gold = [golds[s] for s in ids]
    sides = (candidate.case, candidate.neutral, base.case, base.neutral)
    tables = [_table(gold, [outcomes[s] for s in ids]) for outcomes in sides]
    now, was = _value(measure, *tables[:2]), _value(measure, *tables[2:])
    if now is None or was is None:
        return None
    differ = [s for s in ids if (candidate.case[s], candidate.neutral[s]) != (base.case[s], base.neutral[s])]
    swapped = (_swapped(measure, golds, candidate, base, tables, swap) for swap in _swaps(differ))
    diffs = [d for d in swapped if d is not None]
    observed = now - was
    p = sum(d >= observed - 1e-12 for d in diffs) / len(diffs) if diffs else 1.0
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / max(len(diffs) - 1, 1)) if diffs else 0.0
    significant = p < alpha
    return {
        "name": name,
        "baseline": was,
        "candidate": now,
        "difference": observed,
        "p_value": p,
        "pairs": len(ids),
        "differing": len(differ),
        "max_increase": limit,
        "significant": significant,
        "breach": significant and observed > limit,
        "power": power(se, limit, alpha),
    }


def _swaps(differ: Sequence[str]) -> list[frozenset[str]]:
    """The sets of scenarios whose outcomes change sides: every subset of ``differ`` when it is small, else
    random ones (the first is always none: the observed split)."""
    if len(differ) <= EXACT_UP_TO:
        return [frozenset(s for bit, s in enumerate(differ) if mask >> bit & 1) for mask in range(1 << len(differ))]
    rng = random.Random(SEED)
    return [frozenset()] + [frozenset(s for s in differ if rng.random() < 0.5) for _ in range(DRAWS - 1)]


def _swapped(
    measure: Measure,
    golds: Mapping[str, str],
    candidate: Side,
    base: Side,
    tables: Sequence[dict[str, dict[str, int]]],
    swap: frozenset[str],
) -> float | None:
    """The difference of the two values once the scenarios in ``swap`` traded outcomes (the four tables
    are the candidate's case and neutral, the base's case and neutral, before any trade)."""
    moved = [{g: dict(row) for g, row in table.items()} for table in tables]
    for s in swap:
        gold = golds[s]
        for at, (mine, theirs) in enumerate(((candidate.case, base.case), (candidate.neutral, base.neutral))):
            for table, given, taken in ((moved[at], theirs, mine), (moved[at + 2], mine, theirs)):
                table[gold][taken[s]] -= 1
                table[gold][given[s]] += 1
    now, was = _value(measure, *moved[:2]), _value(measure, *moved[2:])
    return None if now is None or was is None else now - was


def power(se: float, limit: float, level: float) -> dict[str, Any]:
    """The smallest rise found with 80% power (see the module's docstring)."""
    normal = NormalDist()
    mde = max(limit, normal.inv_cdf(1 - level) * se) + normal.inv_cdf(POWER) * se
    return {"mde": mde, "level": level, "text": sees(mde)}


def text(test: Mapping[str, Any]) -> str:
    """``DirErr(less) over neutral: 0.125 on the base, 0.958 now, +0.833, p = 0.001 (sees ...): a
    significant rise above max_increase 0.050``: one own check's test, as the terminal and report say it."""
    limit = test["max_increase"]
    if test["breach"]:
        verdict = f"a significant rise above max_increase {limit:.3f}"
    elif test["significant"]:
        verdict = f"a significant rise, but not above max_increase {limit:.3f}"
    else:
        verdict = "not a significant rise"
    return (
        f"{test['name']}: {test['baseline']:.3f} on the base (which fails it too), {test['candidate']:.3f} now, "
        f"{test['difference']:+.3f}, p = {test['p_value']:.3g} over {test['pairs']} scenarios "
        f"({test['power']['text']}): {verdict}"
    )
