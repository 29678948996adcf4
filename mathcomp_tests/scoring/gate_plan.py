"""How many scenarios each test of a baseline gate needs to see a rise of DirErr(y) over the base: pure
computation for `mathcomp plan` (cli/plan.py reads its inputs and prints the table and commands).

A case's label y is one test (scoring/power.py: the exact one-sided McNemar test on the items whose gold is
not y). For each framing and label the plan keeps the framing's weakest case, the one needing the most
scenarios, and says what the tests that can see the rise need together: scenarios of the dataset, or fresh
ones from test_generated (labels in thirds) where the dataset is too small.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from . import power

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
                seen.append(_seen(mde, test, target))
            if needed is None:
                text = why_not(test, target)
            elif needed <= scale.answered:
                text = f"{needed:,} (the {scale.answered:,} suffice)"
            elif needed <= scale.bundled:
                text = (
                    f"{needed:,} (of the dataset's {scale.bundled:,}; the base answered {scale.answered:,})"
                )
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


def _seen(mde: float | None, test: Test, target: Target) -> str:
    """One cell of the table: the smallest rise seen, or why none is: ``no room`` (the base leaves no room
    above max_increase) or ``too few`` (more scenarios would see one)."""
    if mde is not None:
        return f"+{100 * mde:.1f}"
    return "no room" if power.largest_rise(test.rate, target.churn) <= test.max_increase else "too few"


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
