"""Did DirErr(y) rise over the baseline? A paired test on the same items of one case.

For each label y the pairs are the scenarios whose gold is not y and that both runs answered (failed
requests leave the pairs, as they leave DirErr's denominator); each side is 1 when it answered y. The
test is exact McNemar on the discordant pairs with Newcombe's score interval for the difference (default),
or a paired bootstrap over scenarios (its percentile interval). A label
breaches when the rise is above ``max_increase`` and the test finds it significant at ``alpha``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from ..types import LABELS
from . import intervals

ALPHA = 0.05
METHODS = ("mcnemar", "bootstrap")


@dataclass(frozen=True)
class LabelChange:
    label: str
    baseline: float | None
    candidate: float | None
    difference: float | None
    low: float | None
    high: float | None
    p_value: float
    pairs: int
    rose: int
    """Pairs answered y by the candidate only."""
    fell: int
    """Pairs answered y by the baseline only."""
    max_increase: float
    significant: bool
    breach: bool


@dataclass(frozen=True)
class Comparison:
    """One case against its baseline: a change per label, and three items whose answer changed."""

    baseline_model: str
    method: str
    alpha: float
    changes: dict[str, LabelChange]
    changed_items: list[dict[str, str]] = field(default_factory=list)

    @property
    def breaches(self) -> list[str]:
        return [f"DirErr({y}) rise" for y, c in self.changes.items() if c.breach]

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": "compared",
            "baseline_model": self.baseline_model,
            "method": self.method,
            "alpha": self.alpha,
            "changes": {y: asdict(c) for y, c in self.changes.items()},
            "changed_items": self.changed_items,
        }


def compare(
    golds: Mapping[str, str],
    candidate: Mapping[str, str],
    baseline: Mapping[str, str],
    max_increase: Mapping[str, float],
    *,
    baseline_model: str = "baseline",
    method: str = "mcnemar",
    alpha: float = ALPHA,
) -> Comparison:
    """Compare one case's outcomes (scenario -> less/more/equal/invalid/error) with the baseline's."""
    if method not in METHODS:
        raise ValueError(f"unknown paired test {method!r}; expected one of {', '.join(METHODS)}")
    shared = [s for s in candidate if s in baseline]
    changes: dict[str, LabelChange] = {}
    for y in LABELS:
        pairs = [
            (int(baseline[s] == y), int(candidate[s] == y))
            for s in shared
            if golds[s] != y and "error" not in (baseline[s], candidate[s])
        ]
        changes[y] = _change(y, pairs, max_increase[y], method, alpha)
    changed = [
        {"scenario": s, "gold": golds[s], "baseline": baseline[s], "candidate": candidate[s]}
        for s in shared
        if baseline[s] != candidate[s]
    ]
    # Show first the items that moved towards a label whose DirErr rose the most.
    worst = max(LABELS, key=lambda y: changes[y].difference or 0.0)
    changed.sort(key=lambda i: (i["candidate"] != worst, i["baseline"] == i["gold"]))
    return Comparison(baseline_model, method, alpha, changes, changed[:3])


def _change(label: str, pairs: list[tuple[int, int]], limit: float, method: str, alpha: float) -> LabelChange:
    n = len(pairs)
    rose = sum(1 for b, c in pairs if c and not b)
    fell = sum(1 for b, c in pairs if b and not c)
    if n == 0:
        return LabelChange(label, None, None, None, None, None, 1.0, 0, 0, 0, limit, False, False)
    base = sum(b for b, _ in pairs) / n
    cand = sum(c for _, c in pairs) / n
    if method == "bootstrap":
        d, low, high, p = intervals.paired_bootstrap(pairs)
    else:
        both = sum(1 for b, c in pairs if b and c)
        d, low, high = intervals.paired_difference(both, rose, fell, n)
        p = intervals.mcnemar_exact(rose, fell)
    significant = p < alpha
    breach = significant and d > limit
    return LabelChange(label, base, cand, d, low, high, p, n, rose, fell, limit, significant, breach)


def explanation(comparison: Comparison, case_id: str) -> list[str]:
    """Lines for a failing case: both values, the difference with its interval, the p-value, three items."""
    test = "exact McNemar" if comparison.method == "mcnemar" else "paired bootstrap"
    lines = [
        f"{case_id} against the baseline {comparison.baseline_model} ({test}, alpha {comparison.alpha:g}):"
    ]
    for y, c in comparison.changes.items():
        if c.difference is None:
            lines.append(f"  DirErr({y:<5}) no pairs to compare")
            continue
        verdict = "ROSE" if c.breach else "ok"
        lines.append(
            f"  DirErr({y:<5}) baseline {c.baseline:.3f} -> {c.candidate:.3f}: "
            f"difference {c.difference:+.3f} [95% CI {c.low:+.3f}, {c.high:+.3f}], p = {c.p_value:.4g}, "
            f"max increase {c.max_increase:.3f}: {verdict}"
            f"   ({c.pairs} pairs: {c.rose} newly answered {y}, {c.fell} no longer)"
        )
    if comparison.changed_items:
        lines.append("items whose answer changed:")
        for item in comparison.changed_items:
            lines.append(
                f"  scenario {item['scenario']}: gold {item['gold']}, "
                f"baseline {item['baseline']} -> now {item['candidate']}"
            )
    return lines
