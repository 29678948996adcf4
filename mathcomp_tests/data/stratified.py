"""--limit=N: a cut of the dataset that keeps its categories and gold labels in proportion.

The file's first N rows are often one category (the bundled set opens with 30 Dining rows), so a quick
run cut that way measures something else than a full one. The cut here is deterministic: N is split
across the gold labels by largest remainder, then each label's share across its categories the same way
(a tie goes to the category given least so far, then to the larger, then to the one met first in the
file); a category's share is its first rows in file order; the cut keeps file order. The same file and N
always give the same scenarios, and the baseline records their ids, so a baseline made from another cut
is told as another selection."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ..types import Scenario

HOW = "drawn in proportion to category x label"
"""How the header says the cut was drawn."""


def draw(scenarios: Sequence[Scenario], limit: int | None) -> list[Scenario]:
    """``limit`` scenarios in proportion to gold label, and within each label to category, in file order
    (all when limit is None or covers the file)."""
    if limit is None or limit >= len(scenarios):
        return list(scenarios)
    by_label: dict[str, list[int]] = {}
    for index, scenario in enumerate(scenarios):
        by_label.setdefault(scenario.label, []).append(index)
    given: dict[str, int] = {}  # scenarios each category has got so far, across labels
    chosen: list[int] = []
    for label, count in _shares(by_label, limit, given={}).items():
        by_category: dict[str, list[int]] = {}
        for index in by_label[label]:
            by_category.setdefault(scenarios[index].category, []).append(index)
        for category, n in _shares(by_category, count, given).items():
            given[category] = given.get(category, 0) + n
            chosen += by_category[category][:n]
    return [scenarios[i] for i in sorted(chosen)]


def _shares(groups: dict[str, list[int]], n: int, given: dict[str, int]) -> dict[str, int]:
    """``n`` split across ``groups`` by largest remainder; a tie goes to the group given least so far
    (categories spread across labels), then to the larger group, then to the group met first."""
    total = sum(len(members) for members in groups.values())
    exact = {key: Fraction(n * len(members), total) for key, members in groups.items()}
    counts = {key: int(share) for key, share in exact.items()}
    order = list(groups)
    ranked = sorted(
        order,
        key=lambda k: (-(exact[k] - counts[k]), given.get(k, 0), -len(groups[k]), order.index(k)),
    )
    for key in ranked[: n - sum(counts.values())]:
        counts[key] += 1
    return counts
