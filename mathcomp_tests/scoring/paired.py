"""Did DirErr(y) rise over the baseline? A paired test on the same items of one case.

For each label y the pairs are the scenarios whose gold is not y and that both runs answered (failed
requests leave the pairs, as they leave DirErr's denominator); each side is 1 when it answered y. A label
breaches when the rise is above ``max_increase`` and the test finds it significant at ``alpha``; under a
rise, the items that raised it (the pairs answered y by the candidate only) are kept and shown.

One-sided: the gate asks one question, "did DirErr(y) rise?", and acts only on a rise, so the whole level
goes to that side: p = P(X >= rose), X ~ Binomial(rose + fell, 1/2). A two-sided test would spend half of
alpha on falls the gate never fails a case for, and need one more newly wrong item for every rise (at 24
pairs with nothing falling: 6 items instead of 5). The interval shown stays the two-sided 95% one.

The p-value of both methods is exact McNemar on the discordant pairs; the interval for the difference
is Newcombe's score interval (``mcnemar``, the default) or a paired bootstrap over scenarios, its
percentile interval (``bootstrap``). Why the bootstrap method takes no p-value from its resamples: with
--holm over a nightly run (952 cases, 2,856 tests) each test is held to 0.05 / 2856 = 1.8e-5, and a
p-value read off B = 2000 resamples stops at 1/B = 5e-4, so no rise could ever be found. Resolving that
tail would take millions of resamples per test. A normal tail fitted to the bootstrap's spread does not
stop, but it is a Wald test whose variance is estimated away from the null: anti-conservative just where
Holm looks (40 discordant pairs: it rejects 4.2e-5 of no-change cases at the 1.7e-5 level, 2.5 times
too often; exact McNemar 8.4e-6). The null distribution a resampling test should use instead, each
pair's two answers swapped at random (the sign-flip randomisation test of the paired differences), is for
0/1 answers the Binomial(discordant, 1/2) on the pairs answered y by the candidate only: exact McNemar,
computed exactly rather than sampled. So both methods decide alike, and differ in the interval shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..types import LABELS
from . import intervals, power

ALPHA = 0.05
METHODS = ("mcnemar", "bootstrap")
CUE_MEASURE = "toward-cue rate"
SOFT_MEASURE = "soft DirErr"
SOFT_MOVED = 0.05
"""A soft test's item counts as rising (falling) when its probability of y rose (fell) by more than this."""
EXAMPLES = 3
"""Items shown under a rise (all of them are counted and kept in ``rose_scenarios``)."""


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
    rose_scenarios: list[str] = field(default_factory=list)
    """Every pair that raised DirErr(y) (answered y by the candidate only), in the case's order."""
    rose_examples: list[dict[str, str]] = field(default_factory=list)
    """The first three of them, with gold, baseline and candidate answers."""
    measure: str = "DirErr"
    """What is compared: ``DirErr`` (answers), ``soft DirErr`` (label probabilities, scoring/soft_paired.py)
    or ``toward-cue rate`` (answers that moved to the cue's label from the neutral case's)."""
    power: dict[str, Any] | None = None
    """The smallest rise this test finds with 80% power (``mde``; None when it cannot rise) and its ``text``."""

    @property
    def name(self) -> str:
        """``DirErr(less)``, ``soft DirErr(less)``, ``toward-cue rate(less)``."""
        return f"{self.measure}({self.label})"


@dataclass(frozen=True)
class Comparison:
    """One case against its baseline: a change per label, and three items whose answer changed (those
    that raised the label that rose most first)."""

    baseline_model: str
    method: str
    alpha: float
    changes: dict[str, LabelChange]
    changed_items: list[dict[str, str]] = field(default_factory=list)
    soft: dict[str, LabelChange] = field(default_factory=dict)
    """The same labels' soft DirErr against the base's, under label scoring when the baseline kept them."""
    cue: LabelChange | None = None
    """A cue case's toward-cue rate against the base's (answers moved to the cue's label from neutral's)."""

    @property
    def tests(self) -> list[LabelChange]:
        """Every test of the case against the baseline: DirErr per label, then soft DirErr, then the cue's."""
        return [*self.changes.values(), *self.soft.values(), *([self.cue] if self.cue else [])]

    @property
    def breaches(self) -> list[str]:
        return [f"{c.name} rise" for c in self.tests if c.breach]

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": "compared",
            "baseline_model": self.baseline_model,
            "method": self.method,
            "alpha": self.alpha,
            "changes": {y: asdict(c) for y, c in self.changes.items()},
            "soft": {y: asdict(c) for y, c in self.soft.items()},
            "cue": asdict(self.cue) if self.cue else None,
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
        paired_ids = [s for s in shared if golds[s] != y and "error" not in (baseline[s], candidate[s])]
        pairs = [(int(baseline[s] == y), int(candidate[s] == y)) for s in paired_ids]
        raised = [
            _item(s, golds, baseline, candidate) for s in paired_ids if candidate[s] == y != baseline[s]
        ]
        changes[y] = _change(y, pairs, max_increase[y], method, alpha, raised)
    worst = max(LABELS, key=lambda y: (changes[y].breach, changes[y].difference or 0.0))
    raised_worst = set(changes[worst].rose_scenarios)
    changed = [_item(s, golds, baseline, candidate) for s in shared if baseline[s] != candidate[s]]
    changed.sort(key=lambda i: (i["scenario"] not in raised_worst, i["baseline"] == i["gold"]))
    return Comparison(baseline_model, method, alpha, changes, changed[:EXAMPLES])


def _item(
    s: str, golds: Mapping[str, str], baseline: Mapping[str, str], candidate: Mapping[str, str]
) -> dict[str, str]:
    return {"scenario": s, "gold": golds[s], "baseline": baseline[s], "candidate": candidate[s]}


def _change(
    label: str,
    pairs: list[tuple[int, int]],
    limit: float,
    method: str,
    alpha: float,
    raised: list[dict[str, str]],
) -> LabelChange:
    n = len(pairs)
    rose = sum(1 for b, c in pairs if c and not b)
    fell = sum(1 for b, c in pairs if b and not c)
    if n == 0:
        return LabelChange(label, None, None, None, None, None, 1.0, 0, 0, 0, limit, False, False)
    base = sum(b for b, _ in pairs) / n
    cand = sum(c for _, c in pairs) / n
    if method == "bootstrap":
        d, low, high = intervals.paired_bootstrap(pairs)
    else:
        both = sum(1 for b, c in pairs if b and c)
        d, low, high = intervals.paired_difference(both, rose, fell, n)
    p = intervals.mcnemar_rise(rose, fell)
    significant = p < alpha
    breach = significant and d > limit
    ids, examples = [i["scenario"] for i in raised], raised[:EXAMPLES]
    seen = power.rise_power(n, sum(b for b, _ in pairs), limit, alpha, away=fell)
    return LabelChange(
        label,
        base,
        cand,
        d,
        low,
        high,
        p,
        n,
        rose,
        fell,
        limit,
        significant,
        breach,
        ids,
        examples,
        power={**seen.as_dict(), "text": seen.text(label)},
    )


def cue_change(
    golds: Mapping[str, str],
    neutral: tuple[Mapping[str, str], Mapping[str, str]],
    cued: tuple[Mapping[str, str], Mapping[str, str]],
    cue: str,
    max_increase: float,
    alpha: float,
) -> LabelChange:
    """A cue case's toward-cue rate against the base's: per scenario, 1 when the cued answer is the cue's
    label and the neutral partner's is not (scoring/invariance.py's toward-cue rate), on each side
    (``(baseline, candidate)`` tables of the neutral and the cued case). Scenarios with an unread or failed
    answer among the four are not paired (an unread answer has no direction to move in)."""
    (base_n, cand_n), (base_c, cand_c) = neutral, cued
    ids = [
        s
        for s in golds
        if all(t.get(s) in LABELS for t in (base_n, cand_n, base_c, cand_c))
    ]
    toward = [(int(base_c[s] == cue != base_n[s]), int(cand_c[s] == cue != cand_n[s])) for s in ids]
    raised = [
        {"scenario": s, "gold": golds[s], "baseline": base_c[s], "candidate": cand_c[s]}
        for s, (b, c) in zip(ids, toward, strict=True)
        if c and not b
    ]
    return replace(_change(cue, toward, max_increase, "mcnemar", alpha, raised), measure=CUE_MEASURE)


def explanation(comparison: Comparison, case_id: str) -> list[str]:
    """Lines for a failing case: for every test, both values, the difference with its interval, the
    p-value and the smallest rise it sees; then three items under each rise."""
    test = "exact McNemar" if comparison.method == "mcnemar" else "paired bootstrap interval, exact McNemar p"
    lines = [
        f"{case_id} against the baseline {comparison.baseline_model} ({test}, one-sided, "
        f"level {comparison.alpha:g}):"
    ]
    width = max(len(c.name) for c in comparison.tests)
    for c in comparison.tests:
        if c.difference is None:
            lines.append(f"  {c.name:<{width}} no pairs to compare")
            continue
        verdict = "ROSE" if c.breach else "ok"
        seen = f"; {c.power['text']}" if c.power else ""
        lines.append(
            f"  {c.name:<{width}} baseline {c.baseline:.3f} -> {c.candidate:.3f}: "
            f"difference {c.difference:+.3f} [95% CI {c.low:+.3f}, {c.high:+.3f}], p = {c.p_value:.4g}, "
            f"max increase {c.max_increase:.3f}: {verdict}{seen}   ({_moved(c)})"
        )
    risen = [c for c in comparison.tests if c.breach]
    for c in risen:
        shown = ", ".join(i["scenario"] for i in c.rose_examples)
        plural = "s" if len(c.rose_examples) > 1 else ""
        if c.measure == SOFT_MEASURE:
            lines.append(
                f"{c.name} rose: the probability of {c.label} went up on {c.rose} of {c.pairs} items, most on "
                f"scenario{plural} {shown}:"
            )
            lines += [
                f"  scenario {i['scenario']}: probability of {c.label} {i['baseline']} -> now {i['candidate']}"
                for i in c.rose_examples
            ]
            continue
        lines.append(f"{c.name} rose on {c.rose} items newly {_newly(c)}, e.g. scenario{plural} {shown}:")
        lines += _item_lines(c.rose_examples)
    if not risen and comparison.changed_items:
        lines.append("items whose answer changed:")
        lines += _item_lines(comparison.changed_items)
    return lines


def _newly(c: LabelChange) -> str:
    return f"moved to {c.label} from the neutral answer" if c.measure == CUE_MEASURE else f"answered {c.label}"


def _moved(c: LabelChange) -> str:
    if c.measure == SOFT_MEASURE:
        return f"{c.pairs} items: {c.rose} gave {c.label} more than {SOFT_MOVED} more, {c.fell} less"
    return f"{c.pairs} pairs: {c.rose} newly {_newly(c)}, {c.fell} no longer"


def _item_lines(items: list[dict[str, str]]) -> list[str]:
    return [
        f"  scenario {i['scenario']}: gold {i['gold']}, baseline {i['baseline']} -> now {i['candidate']}"
        for i in items
    ]
