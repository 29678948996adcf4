"""Did the label probabilities move towards y over the baseline? The soft DirErr test on the same items.

Under label scoring (--scoring=logprob) every item has the model's probability of each label, and soft
DirErr(y) is the mean probability of y over the items whose gold is not y. A hard answer moves only when y
overtakes the other labels, so a model that already answers y on most such items (or one at chance) can
lean much further towards y with DirErr(y) barely able to move; its probabilities show it. The test pairs
each item's probability of y in the run with the baseline's (items whose gold is not y that both scored),
and asks, one-sided, whether their mean difference is above 0: Student's t on the paired differences. A
label breaches when the test finds the rise significant at the case's level and the mean rise is above
``max_increase``, as the hard test does. The 95% interval printed beside it is the same test's t interval
at every n, so the two agree: its low end is above 0 exactly when the one-sided p is below 0.025. (No
interval that assumes nothing about the differences could do both that and see a consistent lean on a
few dozen items; docs/statistics-and-gates.md, "Interval coverage", says what the t interval assumes.)

Power: the smallest true mean rise the test finds with 80% power, reading the spread of the paired
differences off the run (``se``): it breaches when the mean is above ``c = max(max_increase,
t(1 - level) * se)``, so the rise it sees is ``c + t(0.8) * se``. Where the runs agree item for item
(the same weights: no spread), the spread of the base's probabilities stands in, the size of a change
that moves items unevenly. A label whose base already gives y nearly all its mass cannot rise that far:
"cannot rise".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..types import LABELS
from . import intervals
from .paired import EXAMPLES, SOFT_MEASURE, SOFT_MOVED, LabelChange
from .power import POWER, sees
from .precision import as_kept


def soft_changes(
    golds: Mapping[str, str],
    candidate: Mapping[str, Mapping[str, float]],
    baseline: Mapping[str, Mapping[str, float]],
    max_increase: Mapping[str, float],
    alpha: float,
) -> dict[str, LabelChange]:
    """Per label, the paired test of the items' probabilities of it (scenario -> label -> probability on
    each side; items missing on either side are not paired). Both sides are compared at the precision a
    baseline file keeps (thousandths): a copy of the base compares as a copy, difference 0 and p = 1."""
    shared = [s for s in golds if s in candidate and s in baseline]
    out: dict[str, LabelChange] = {}
    for y in LABELS:
        ids = [s for s in shared if golds[s] != y]
        base = [as_kept(baseline[s].get(y, 0.0)) for s in ids]
        cand = [as_kept(candidate[s].get(y, 0.0)) for s in ids]
        out[y] = change(y, ids, base, cand, max_increase[y], alpha)
    return out


def change(
    label: str, ids: Sequence[str], base: Sequence[float], cand: Sequence[float], limit: float, alpha: float
) -> LabelChange:
    """One label's paired test on per-item values (probabilities, or 0/1 shares) of the two runs."""
    n = len(ids)
    diffs = [c - b for b, c in zip(base, cand, strict=True)]
    rose = [s for s, d in zip(ids, diffs, strict=True) if d > SOFT_MOVED]
    fell = sum(1 for d in diffs if d < -SOFT_MOVED)
    if n < 2:
        return LabelChange(
            label,
            None,
            None,
            None,
            None,
            None,
            1.0,
            n,
            len(rose),
            fell,
            limit,
            False,
            False,
            measure=SOFT_MEASURE,
        )
    mean, low, high, se = intervals.t_difference(diffs)
    p = _p_rise(mean, se, n)
    significant = p < alpha
    ranked = sorted(zip(ids, diffs, base, cand, strict=True), key=lambda r: -r[1])
    examples = [
        {"scenario": s, "baseline": f"{b:.3f}", "candidate": f"{c:.3f}"}
        for s, d, b, c in ranked[:EXAMPLES]
        if d > 0
    ]
    return LabelChange(
        label,
        sum(base) / n,
        sum(cand) / n,
        mean,
        low,
        high,
        p,
        n,
        len(rose),
        fell,
        limit,
        significant,
        significant and mean > limit,
        rose,
        examples,
        measure=SOFT_MEASURE,
        power=power(base, se if se > 0 else _spread(base) / math.sqrt(n), n, limit, alpha, label),
    )


def _p_rise(mean: float, se: float, n: int) -> float:
    if se == 0:
        return 1.0 if mean <= 0 else 0.0
    return intervals.t_upper_tail(mean / se, n - 1)


def _spread(values: Sequence[float]) -> float:
    n = len(values)
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / max(n - 1, 1))


def smallest_rise(mean: float, se: float, n: int, limit: float, level: float, power: float = POWER) -> float | None:
    """The smallest mean rise of the probability of y the test finds with ``power``, the base's mean being
    ``mean`` over ``n`` pairs and the paired differences' standard error ``se``; None where the base leaves
    no room for it (the mean cannot rise past 1)."""
    critical = max(limit, intervals.t_quantile(1 - level, n - 1) * se)
    mde = critical + intervals.t_quantile(power, n - 1) * se
    return None if mde >= 1 - mean else mde


def power(
    base: Sequence[float], se: float, n: int, limit: float, level: float, label: str
) -> dict[str, object]:
    """The smallest mean rise found with 80% power (see the module's docstring), as summary.json keeps it."""
    mde = smallest_rise(sum(base) / n, se, n, limit, level)
    if mde is None:
        already = f"cannot rise: the base already gives {label} a mean probability of {sum(base) / n:.3f}"
        return {"mde": None, "pairs": n, "level": level, "text": already}
    return {
        "mde": mde,
        "pairs": n,
        "level": level,
        "text": sees(mde),
    }
