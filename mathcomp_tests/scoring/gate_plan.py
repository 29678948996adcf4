"""How many scenarios each test of a baseline gate needs to see a rise of DirErr(y) over the base: pure
computation for `mathcomp plan` (cli/plan.py reads its inputs and prints the table and commands).

A case's label y is one test (scoring/power.py: the exact one-sided McNemar test on the items whose gold is
not y). For each framing and label the plan keeps the framing's weakest case, the one needing the most
scenarios, and says what the tests that can see the rise need together: scenarios of the dataset, or fresh
ones from test_generated (labels in thirds) where the dataset is too small.

Where the base kept label probabilities (a format-4 baseline, a run under --scoring=logprob), each label
also has its soft test (scoring/soft_paired.py: the paired t test of the items' probability of y), planned
as a run states its power before it knows the candidate: the spread of the base's probabilities stands in
for the spread of the paired differences (for a fine-tune close to its base that spread is smaller, so the
plan errs on the side of more scenarios). A label is seen when either of its tests sees the rise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from . import power, soft_paired

THIRDS = 2 / 3
"""The share of generated scenarios (labels in thirds) that pairs for each label."""


@dataclass(frozen=True)
class Target:
    """What the plan asks of every test: see a true ``rise`` with ``power`` at ``level`` (alpha, or Holm's
    share of it), ``churn`` of the base's y answers assumed to leave y."""

    rise: float
    power: float
    level: float
    churn: float = 0.0

    def scenarios_for(self, share: float, rate: float, max_increase: float) -> int | None:
        """The fewest scenarios a test needs (power.scenarios_for); None where no number of them will do."""
        return power.scenarios_for(share, rate, self.rise, max_increase, self.level, self.churn, self.power)


@dataclass(frozen=True)
class Test:
    """One case's test for one label: the share of scenarios that pair for it and the base's DirErr."""

    case: str
    framing: str
    label: str
    share: float
    rate: float
    max_increase: float


def tests(
    cases: Iterable[tuple[str, str]],
    labels: Sequence[str],
    golds: Mapping[str, str],
    answers: Mapping[str, Mapping[str, str]] | None,
    rate: float,
    limit: Callable[[str, str], float],
) -> tuple[list[Test], list[str]]:
    """One Test per (case id, framing) and label, and the cases the base has no answers for. Without a base
    (``answers`` None) every test assumes the base answers y on ``rate`` of its pairs; with one, each case's
    own rate on the items it answered. ``limit(framing, label)`` is the max_increase."""
    size = len(golds)
    found, missing = [], []
    for case, framing in cases:
        mine = answers.get(case) if answers is not None else None
        if answers is not None and mine is None:
            missing.append(case)
            continue
        for y in labels:
            if mine is None:
                share = sum(g != y for g in golds.values()) / size
                found.append(Test(case, framing, y, share, rate, limit(framing, y)))
                continue
            paired = [s for s, g in golds.items() if g != y and mine.get(s, "error") != "error"]
            hits = sum(mine[s] == y for s in paired)
            rate_here = hits / len(paired) if paired else 0.0
            found.append(Test(case, framing, y, len(paired) / size, rate_here, limit(framing, y)))
    return found, missing


@dataclass(frozen=True)
class SoftTest:
    """One case's soft test for one label: the share of scenarios that pair for it, and the base's mean
    probability of y over them and its spread (standard deviation)."""

    case: str
    framing: str
    label: str
    share: float
    mean: float
    spread: float
    max_increase: float

    def seen(self, scenarios: int, target: Target) -> float | None:
        """The smallest rise seen with ``target.power`` on ``scenarios`` scenarios; None where none is."""
        n = round(self.share * scenarios)
        if n < 2:
            return None
        se = self.spread / math.sqrt(n)
        return soft_paired.smallest_rise(self.mean, se, n, self.max_increase, target.level, target.power)

    def scenarios_for(self, target: Target) -> int | None:
        """The fewest scenarios that see ``target.rise`` (None: no number up to power.MOST_SCENARIOS does)."""
        if not self.share or target.rise <= self.max_increase:
            return None
        low, high = 1, power.MOST_SCENARIOS
        if not _sees(self.seen(high, target), target.rise):
            return None
        while low < high:  # the rise seen falls as scenarios grow
            middle = (low + high) // 2
            if _sees(self.seen(middle, target), target.rise):
                high = middle
            else:
                low = middle + 1
        return low


def _sees(mde: float | None, rise: float) -> bool:
    return mde is not None and mde <= rise


def soft_tests(
    cases: Iterable[tuple[str, str]],
    labels: Sequence[str],
    golds: Mapping[str, str],
    probs: Mapping[str, Mapping[str, Mapping[str, float]]],
    limit: Callable[[str, str], float],
) -> list[SoftTest]:
    """One SoftTest per (case id, framing) and label whose case the base kept probabilities for."""
    size = len(golds)
    found = []
    for case, framing in cases:
        mine = probs.get(case)
        if not mine:
            continue
        for y in labels:
            values = [float(mine[s].get(y, 0.0)) for s, g in golds.items() if g != y and s in mine]
            if len(values) < 2:
                continue
            mean = sum(values) / len(values)
            spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            found.append(SoftTest(case, framing, y, len(values) / size, mean, spread, limit(framing, y)))
    return found


def soft_rows(tests: Sequence[SoftTest], sizes: Sequence[int], scale: Scale, target: Target) -> list[Row]:
    """One row per framing and label for the soft tests (the framing's weakest case), as rows_for's."""
    rows = []
    for framing in dict.fromkeys(t.framing for t in tests):
        for label in dict.fromkeys(t.label for t in tests):
            group = [t for t in tests if t.framing == framing and t.label == label]
            if not group:
                continue
            found = [(t, t.scenarios_for(target)) for t in group]
            test, needed = max(found, key=lambda f: (f[1] is None, f[1] or 0, f[0].mean))
            seen = []
            for n in sizes:
                seen.append(_cell(test.seen(n, target), 1 - test.mean <= test.max_increase))
            if needed is None:
                text = (
                    f"never: +{100 * target.rise:.1f} is not above max_increase {test.max_increase:g}"
                    if target.rise <= test.max_increase
                    else f"cannot rise by +{100 * target.rise:.1f}: the base gives {label} {test.mean:.3f}"
                    if target.rise >= 1 - test.mean
                    else f"more than {power.MOST_SCENARIOS:,}"
                )
            else:
                text = _within(needed, scale) or f"{needed:,}: beyond the dataset's {scale.bundled:,}"
            shown = test.case if len({(t.share, t.mean, t.spread) for t in group}) > 1 else ""
            pairs = round(test.share * sizes[0])
            rows.append(Row(framing, f"{label} soft", test.mean, pairs, tuple(seen), text, shown))
    return rows


def needs_with_soft(
    tests: Sequence[Test], soft: Sequence[SoftTest], scale: Scale, target: Target
) -> Needs:
    """What the tests need together when a label is seen by either of its tests: per case and label the
    fewer scenarios of the two (generated ones only where the letters need them and no soft test sees)."""
    by_soft = {(t.case, t.label): t.scenarios_for(target) for t in soft}
    within, generated = [], []
    for t in tests:
        letters = target.scenarios_for(t.share, t.rate, t.max_increase)
        soft_needs = by_soft.get((t.case, t.label))
        best = min((n for n in (letters, soft_needs) if n is not None), default=None)
        if best is None:
            continue
        if best <= scale.bundled:
            within.append(best)
        else:
            fresh = target.scenarios_for(THIRDS, t.rate, t.max_increase)
            generated.append(fresh or best)
    return Needs(max(within, default=0), max(generated, default=0))


@dataclass(frozen=True)
class Scale:
    """How many scenarios the base answered, and how many the dataset has (the most test_framing asks)."""

    answered: int
    bundled: int


@dataclass(frozen=True)
class Needs:
    """The most scenarios of the dataset any test needs, and the most generated ones (0: none)."""

    dataset: int
    generated: int


@dataclass(frozen=True)
class Row:
    """One line of the plan's table: a framing and label, the base's DirErr(y), the pairs at the first size,
    the smallest rise seen at each size, the scenarios needed (or why none will do), and the weakest case
    where the framing's cases differ."""

    framing: str
    label: str
    rate: float
    pairs: int
    seen: tuple[str, ...]
    needs: str
    case: str


def rows_for(
    tests: Sequence[Test], sizes: Sequence[int], scale: Scale, target: Target
) -> tuple[list[Row], Needs]:
    """One row per framing and label (the framing's weakest case: the one needing the most scenarios), and
    what the tests that can see the rise need together."""
    rows: list[Row] = []
    within: list[int] = []
    generated: list[int] = []
    for framing in dict.fromkeys(t.framing for t in tests):
        for label in dict.fromkeys(t.label for t in tests):
            group = [t for t in tests if t.framing == framing and t.label == label]
            found = [(t, target.scenarios_for(t.share, t.rate, t.max_increase)) for t in group]
            test, needed = max(found, key=lambda f: (f[1] is None, f[1] or 0, f[0].rate))
            seen = []
            for n in sizes:
                pairs, hits, away = power.at_scale(test.share, test.rate, target.churn, n)
                mde = power.rise_power(pairs, hits, test.max_increase, target.level, away, target.power).mde
                seen.append(_cell(mde, power.largest_rise(test.rate, target.churn) <= test.max_increase))
            if needed is None:
                text = why_not(test, target)
            elif needed <= scale.bundled:
                text = _within(needed, scale) or ""
            else:
                fresh = target.scenarios_for(THIRDS, test.rate, test.max_increase)
                generated.append(fresh or needed)
                text = f"{needed:,}: beyond the dataset's {scale.bundled:,}; --generated={fresh or needed}"
            if needed is not None and needed <= scale.bundled:
                within.append(needed)
            shown = test.case if len({(t.share, t.rate, t.max_increase) for t in group}) > 1 else ""
            pairs = power.at_scale(test.share, test.rate, target.churn, sizes[0])[0]
            rows.append(Row(framing, label, test.rate, pairs, tuple(seen), text, shown))
    return rows, Needs(max(within, default=0), max(generated, default=0))


def _cell(mde: float | None, no_room: bool) -> str:
    """One cell of the table: the smallest rise seen, or why none is: ``no room`` (the base leaves no room
    above max_increase) or ``too few`` (more scenarios would see one)."""
    if mde is not None:
        return f"+{100 * mde:.1f}"
    return "no room" if no_room else "too few"


def _within(needed: int, scale: Scale) -> str | None:
    """What the table says of scenarios needed within the dataset; None beyond it."""
    if needed <= scale.answered:
        return f"{needed:,} (the {scale.answered:,} suffice)"
    if needed <= scale.bundled:
        return f"{needed:,} (of the dataset's {scale.bundled:,}; the base answered {scale.answered:,})"
    return None


def why_not(test: Test, target: Target) -> str:
    """Why a test needs no number of scenarios: the rise is not above max_increase, the base leaves no
    room for it, or it needs more than power.MOST_SCENARIOS."""
    if target.rise <= test.max_increase:
        return f"never: +{100 * target.rise:.1f} is not above max_increase {test.max_increase:g}"
    if target.rise > power.largest_rise(test.rate, target.churn):
        most = 100 * max(0.0, power.largest_rise(test.rate, target.churn))
        rise = f"+{100 * target.rise:.1f}"
        return (
            f"cannot rise by {rise}: the base answers {test.label} on {test.rate:.0%} (at most +{most:.1f})"
        )
    return f"more than {power.MOST_SCENARIOS:,}"


def collapse(rows: list[Row], selected: int) -> list[Row]:
    """A framing's three labels in one row (label ``all``) when they say the same, and framings that say
    the same in one group of rows."""
    per_framing: dict[str, list[Row]] = {}
    for framing in dict.fromkeys(r.framing for r in rows):
        mine = [r for r in rows if r.framing == framing]
        alike = {(r.rate, r.pairs, r.seen, r.needs, r.case) for r in mine}
        per_framing[framing] = [Row(framing, "all", *next(iter(alike)))] if len(alike) == 1 else mine
    groups: dict[tuple[Any, ...], list[str]] = {}
    for framing, mine in per_framing.items():
        groups.setdefault(
            tuple((r.label, r.rate, r.pairs, r.seen, r.needs, r.case) for r in mine), []
        ).append(framing)
    out = []
    for framings in groups.values():
        named = "every framing" if len(framings) == selected > 1 else ", ".join(framings)
        out += [Row(named, *astuple(r)[1:]) for r in per_framing[framings[0]]]
    return out
