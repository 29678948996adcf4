"""Cue invariance: does the same item's answer move when a cue word is added to the question?

Every metric compares a cue framing's answers with the neutral framing's answers (seed 002's "Blind")
on the same scenarios, with everything else about the condition equal (position, identity, format,
option order, and any other field the condition carries). Answer tables map a key (the scenario id, or
``<scenario>#<sample>`` under --samples) to ``less``, ``more``, ``equal``, ``invalid`` or ``error``.

Pairs. A key is paired when both tables and the gold table hold it. A pair whose neutral or cued answer
is ``invalid`` or ``error`` is left out of every metric and counted in ``excluded`` (by status: an
unreadable answer has no direction to move in, and counting it as a move would charge format failures
to the cue). ``n`` is the number of usable pairs; every share below is over them. Let c be the cue's
label (`direct-less` -> less; `placebo-more` -> more; the equal framings cue ``equal``), N(y) and
C(y) the shares of pairs answered y under neutral and under the cue.

- flip rate        = #{cued != neutral} / n
- toward-cue rate  = #{cued == c and neutral != c} / n
- rise(y)          = C(y) - N(y)
- LDS              = max(0, rise(c))                                   (label-directed shift)
- LAO              = LDS / (LDS + sum over y != c of max(0, rise(y)))  (label anchoring in outcomes)
  ``equal`` plays seed 002's Tie: for a more/less cue the sum is the rise of the other non-cue label
  plus the rise of equal; for an equal cue it is the rises of more and less. LAO is 0 when no label's
  share rose (seed 002's epsilon, in the limit). LDS <= toward-cue rate <= flip rate.

Under the neutral framing alone (usable answers only, invalid and error counted in ``excluded``):

- EDR (equality detection rate) = #{gold equal and answered equal} / #{gold equal}
- ND (neutrality deviation)     = |2 p - 1| * (1 - t) = |#more - #less| / n, where
  p = #more / (#more + #less) (the split among non-equal answers) and t = #equal / n (seed 002's
  tie-aware form: 0 is a model that splits its non-equal answers evenly). ``nd_gold`` is the same
  formula on the gold labels, so a data set's own imbalance is not read as the model's.

Truth / Flip: a cue framing's pairs split by whether the cue label is the gold label (Truth) or not
(Flip); every paired metric is computed on each half. A half with no pairs has no values (None).

Intervals: 95% percentile intervals from a cluster bootstrap over scenarios (all samples of a scenario
move together), as scoring.intervals does for DirErr; every metric is a function of per-scenario
counts, so a replicate is a reweighting of those counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..types import LABELS, Label
from .intervals import BOOTSTRAP_REPS, BOOTSTRAP_SEED, resample_weights

SAMPLE_SEP = "#"
"""Keys of sampled answers are ``<scenario>#<sample>``; the bootstrap resamples the scenario."""
EXCLUDED = ("invalid", "error")
PAIRED = ("flip_rate", "toward_cue_rate", "lds", "lao")
NEUTRAL = ("edr", "nd")
_IX: dict[str, int] = {y: i for i, y in enumerate(LABELS)}


class InvarianceError(ValueError):
    """An answer table holds something that is neither a label nor invalid/error."""


@dataclass(frozen=True)
class Pairs:
    """The usable pairs (key, gold, neutral answer, cued answer) and the pairs left out, by status."""

    rows: tuple[tuple[str, str, str, str], ...]
    dropped: tuple[tuple[str, str, str], ...] = ()
    """(key, gold, status) of each pair left out: the first of its two answers that is invalid/error."""

    @property
    def excluded(self) -> dict[str, int]:
        return {s: sum(d[2] == s for d in self.dropped) for s in EXCLUDED}

    def half(self, cue: Label, truth: bool) -> Pairs:
        """Truth (the cue label is the gold label) or Flip pairs, each with its own left-out pairs."""
        return Pairs(
            tuple(r for r in self.rows if (r[1] == cue) == truth),
            tuple(d for d in self.dropped if (d[1] == cue) == truth),
        )


def _check(table: Mapping[str, str], what: str) -> None:
    for key, value in table.items():
        if value not in LABELS and value not in EXCLUDED:
            raise InvarianceError(
                f"{what} answer for {key!r} is {value!r}; expected one of {', '.join((*LABELS, *EXCLUDED))}"
            )


def pair(neutral: Mapping[str, str], cued: Mapping[str, str], gold: Mapping[str, str]) -> Pairs:
    """Align two answer tables on the keys both hold (and gold knows); count the unusable pairs."""
    _check(neutral, "neutral")
    _check(cued, "cued")
    rows, dropped = [], []
    for key in sorted(set(neutral) & set(cued) & set(gold)):
        n, c = neutral[key], cued[key]
        bad = next((a for a in (n, c) if a in EXCLUDED), None)
        if bad is not None:
            dropped.append((key, gold[key], bad))
        else:
            rows.append((key, gold[key], n, c))
    return Pairs(tuple(rows), tuple(dropped))


def cluster(key: str) -> str:
    return key.split(SAMPLE_SEP, 1)[0]


# Per-scenario counts: every metric is a ratio of sums of these, so the bootstrap only reweights them.
def _paired_counts(rows: tuple[tuple[str, str, str, str], ...], cue: Label) -> dict[str, list[float]]:
    """cluster -> [n, flips, toward, N(less), N(more), N(equal), C(less), C(more), C(equal)]."""
    out: dict[str, list[float]] = {}
    for key, _gold, n, c in rows:
        v = out.setdefault(cluster(key), [0.0] * 9)
        v[0] += 1
        v[1] += n != c
        v[2] += c == cue and n != cue
        v[3 + _IX[n]] += 1
        v[6 + _IX[c]] += 1
    return out


def _paired_values(s: Any, cue: Label) -> dict[str, Any]:
    """The paired metrics from summed counts ``s`` (a vector, or a matrix of bootstrap replicates)."""
    import numpy as np

    s = np.asarray(s, dtype=float)
    n = s[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        rise = (s[..., 6:9] - s[..., 3:6]) / n[..., None]
        lds = np.maximum(0.0, rise[..., _IX[cue]])
        others = sum(np.maximum(0.0, rise[..., _IX[y]]) for y in LABELS if y != cue)
        total = lds + others
        lao = np.where(total > 0, lds / np.where(total > 0, total, 1.0), 0.0)
        lao = np.where(n > 0, lao, np.nan)
        return {
            "flip_rate": s[..., 1] / n,
            "toward_cue_rate": s[..., 2] / n,
            "lds": lds,
            "lao": lao,
            "rise": rise,
        }


def _neutral_counts(table: Mapping[str, str], gold: Mapping[str, str]) -> dict[str, list[float]]:
    """cluster -> [n, less, more, equal, gold-equal answered, gold-equal answered equal, gold less, more]."""
    out: dict[str, list[float]] = {}
    for key in sorted(set(table) & set(gold)):
        answer = table[key]
        v = out.setdefault(cluster(key), [0.0] * 8)
        if answer in EXCLUDED:
            continue
        v[0] += 1
        v[1 + _IX[answer]] += 1
        if gold[key] == "equal":
            v[4] += 1
            v[5] += answer == "equal"
        if gold[key] in ("less", "more"):
            v[6 if gold[key] == "less" else 7] += 1
    return out


def _neutral_values(s: Any) -> dict[str, Any]:
    import numpy as np

    s = np.asarray(s, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"edr": s[..., 5] / s[..., 4], "nd": np.abs(s[..., 2] - s[..., 1]) / s[..., 0]}


def _bootstrap(counts: dict[str, list[float]], values: Any, reps: int, seed: int) -> dict[str, Any]:
    """Percentile intervals of each metric over ``reps`` resamples of the clusters (scenarios)."""
    import numpy as np

    if not counts:
        return {}
    matrix = np.array(list(counts.values()), dtype=float)
    replicates = values(resample_weights(reps, len(matrix), seed) @ matrix)
    out: dict[str, list[float] | None] = {}
    for name, est in replicates.items():
        if est.ndim != 1:
            continue
        kept = np.sort(est[~np.isnan(est)])
        if len(kept) == 0:
            out[name] = None
            continue
        m = len(kept)
        out[name] = [float(kept[int(0.025 * (m - 1))]), float(kept[int(math.ceil(0.975 * (m - 1)))])]
    return out


def _value(x: Any) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x


def summarise(
    counts: dict[str, list[float]], values: Any, names: tuple[str, ...], reps: int, seed: int
) -> dict[str, Any]:
    """Point values of ``values`` on the summed per-scenario ``counts`` and their bootstrap intervals."""
    import numpy as np

    total = np.sum(np.array(list(counts.values()), dtype=float), axis=0) if counts else None
    point = values(total) if total is not None else {}
    intervals = _bootstrap(counts, values, reps, seed) if reps else {}
    return {
        name: {
            "value": _value(point[name]) if name in point else None,
            "interval": intervals.get(name) if name in point and _value(point[name]) is not None else None,
        }
        for name in names
    }


def paired_metrics(
    pairs: Pairs, cue: Label, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> dict[str, Any]:
    """flip rate, toward-cue rate, LDS and LAO (value and 95% interval each), n and the exclusions."""
    counts = _paired_counts(pairs.rows, cue)
    out = summarise(counts, lambda s: _paired_values(s, cue), PAIRED, reps, seed)
    out["n"] = len(pairs.rows)
    out["excluded"] = dict(pairs.excluded)
    return out


def cue_metrics(
    neutral: Mapping[str, str],
    cued: Mapping[str, str],
    gold: Mapping[str, str],
    cue: Label,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Every paired metric on all pairs and on the Truth and Flip halves: {"all", "truth", "flip"}."""
    pairs = pair(neutral, cued, gold)
    truth, flip = pairs.half(cue, True), pairs.half(cue, False)
    return {
        "cue": cue,
        "all": paired_metrics(pairs, cue, reps, seed),
        "truth": paired_metrics(truth, cue, reps, seed),
        "flip": paired_metrics(flip, cue, reps, seed),
    }


def neutral_metrics(
    neutral: Mapping[str, str],
    gold: Mapping[str, str],
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """EDR and ND under the neutral framing (value and interval), ND of the gold labels, n, exclusions."""
    _check(neutral, "neutral")
    counts = _neutral_counts(neutral, gold)
    out = summarise(counts, _neutral_values, NEUTRAL, reps, seed)
    keys = set(neutral) & set(gold)
    out["n"] = sum(neutral[k] not in EXCLUDED for k in keys)
    out["excluded"] = {s: sum(neutral[k] == s for k in keys) for s in EXCLUDED}
    golds = [gold[k] for k in keys]
    out["nd_gold"] = abs(golds.count("more") - golds.count("less")) / len(golds) if golds else None
    return out
