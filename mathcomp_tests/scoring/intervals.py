"""95% intervals for shares: Wilson for one case (its items are distinct scenarios), a cluster bootstrap
over scenarios for anything that pools cases (the same scenario appears in every case, so items are not
independent), and the exact McNemar test and a paired interval for a change between two runs.

Where an interval was measured to cover the truth too rarely (benchmarks/interval_coverage.py; docs/
statistics-and-gates.md, "Interval coverage"), it hands over to one that holds, under the same signature:
the pooled bootstrap below CLUSTER_BOOTSTRAP_FROM scenarios and the paired bootstrap below
BOOTSTRAP_DISCORDANT_FROM discordant pairs. A mean difference of label probabilities keeps the t interval
at every n, as its t-test does: the interval printed beside a p-value is the one that p-value inverts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 20240611
CLUSTER_BOOTSTRAP_FROM = 100
"""Scenarios from which a pooled share takes the percentile bootstrap; below, the design-effect Wilson
interval (with 10 to 50 scenarios the bootstrap covered 80-92% on average, as little as 33%)."""
BOOTSTRAP_DISCORDANT_FROM = 20
"""Discordant pairs from which the paired bootstrap prints its percentile interval; below, Newcombe's (the
resampled mean takes few values and collapses to a point when no pair changed: as little as 4% coverage)."""


def wilson(hits: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for hits/n (None when n is 0); stays inside [0, 1], sane at 0 and n."""
    if n <= 0:
        return None
    if not 0 <= hits <= n:
        raise ValueError(f"hits must be between 0 and n={n}, got {hits}")
    p = hits / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if hits == 0 else max(0.0, centre - half)
    return low, 1.0 if hits == n else min(1.0, centre + half)


def cluster_bootstrap(
    clusters: Mapping[str, Sequence[tuple[int, int]]],
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """95% interval of a pooled ratio sum(hits)/sum(n) whose items come in clusters (scenarios).

    ``clusters`` maps a scenario id to its (hits, n) pairs, one per case that pools it. Resampling scenarios
    (not items) keeps the correlation between cases that share a scenario, which a per-item interval ignores:
    the percentile bootstrap from CLUSTER_BOOTSTRAP_FROM scenarios, the design-effect Wilson interval below.
    """
    totals = _cluster_totals(clusters)
    if not totals:
        return None
    if len(totals) < CLUSTER_BOOTSTRAP_FROM:
        return design_effect_wilson(totals)
    return cluster_percentile(clusters, reps, seed)


def _cluster_totals(clusters: Mapping[str, Sequence[tuple[int, int]]]) -> list[tuple[int, int]]:
    totals = [(sum(h for h, _ in pairs), sum(n for _, n in pairs)) for pairs in clusters.values()]
    return [t for t in totals if t[1] > 0]


def cluster_percentile(
    clusters: Mapping[str, Sequence[tuple[int, int]]],
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """The percentile interval of the pooled ratio, resampling whole scenarios (any number of them)."""
    import numpy as np  # here, not at module level: importing the plugin stays cheap

    totals = _cluster_totals(clusters)
    if not totals:
        return None
    sums = resample_weights(reps, len(totals), seed) @ np.array(totals, dtype=float)
    estimates = np.sort(sums[:, 0] / sums[:, 1])
    return float(estimates[int(0.025 * (reps - 1))]), float(estimates[int(math.ceil(0.975 * (reps - 1)))])


def design_effect_wilson(totals: Sequence[tuple[int, int]]) -> tuple[float, float]:
    """Wilson's interval for a pooled ratio over k clusters of (hits, n), on the effective number of items.

    The ratio's variance between clusters (the linearised, cluster-robust estimate) against a binomial's
    on as many items gives the design effect; the items divided by it are the effective n, kept between k
    (cases always agree on a scenario) and all items (they never do), k when the ratio is 0 or 1 and
    nothing can be estimated. Student's t with k - 1 degrees of freedom replaces z, as Korn and Graubard
    (1998) do for shares estimated from clustered samples.
    """
    k = len(totals)
    hits, items = sum(h for h, _ in totals), sum(n for _, n in totals)
    p = hits / items
    spread = sum((h - p * n) ** 2 for h, n in totals) * k / max(k - 1, 1) / items**2
    effective: float = k  # a ratio of 0 or 1 says nothing of the spread: the fewest items it could be
    if 0 < p < 1:
        effective = items if spread == 0 else min(items, max(k, p * (1 - p) / spread))
    z = t_quantile(0.975, k - 1) if k > 1 else Z95
    low, high = _score(p, effective, z)
    return (0.0 if hits == 0 else low), (1.0 if hits == items else high)


def _score(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a share p of n items (n need not be whole)."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@functools.lru_cache(maxsize=4)
def resample_weights(reps: int, k: int, seed: int) -> Any:
    """How often each of ``k`` clusters is drawn in each of ``reps`` resamples (read-only): the same for
    every pooled number of a run with the same scenarios, so drawn once (a few sizes kept: reps x k floats
    each). A resample's estimate is then one matrix product with the clusters' counts."""
    import numpy as np

    draws = np.random.default_rng(seed).integers(0, k, size=(reps, k))
    cells = (draws + k * np.arange(reps)[:, None]).ravel()  # one bincount over (resample, cluster) cells
    weights = np.bincount(cells, minlength=reps * k).reshape(reps, k).astype(float)
    weights.setflags(write=False)
    return weights


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: b and c are the discordant pairs (0->1 and 1->0).

    The binomial tail is summed in integers and divided once, so the float is the exact p correctly
    rounded: no floor and no loss of precision however small (it reaches 0.0 only below about 5e-324,
    where any test rejects), which Holm over thousands of tests needs.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must not be negative, got {b} and {c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = term = 1
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / 2**n)


def mcnemar_rise(rose: int, fell: int) -> float:
    """One-sided exact McNemar p-value for a rise: P(X >= rose), X ~ Binomial(rose + fell, 1/2).

    ``rose`` pairs are 1 only for the candidate, ``fell`` 1 only for the baseline. The gate asks one
    question, "did it rise?", so the whole level goes to that side (see scoring/paired.py). Summed in
    integers and divided once, like mcnemar_exact: exact however small.
    """
    if rose < 0 or fell < 0:
        raise ValueError(f"discordant counts must not be negative, got {rose} and {fell}")
    n = rose + fell
    if rose == 0:
        return 1.0
    tail, term = 0, 1
    for i in range(n + 1):  # term = C(n, i)
        if i >= rose:
            tail += term
        term = term * (n - i) // (i + 1)
    return min(1.0, tail / 2**n)


def t_difference(diffs: Sequence[float], z: float = Z95) -> tuple[float, float, float, float]:
    """(mean, low, high, standard error) of paired differences: a t interval (the normal quantile ``z``
    widened by Student's t for n - 1 degrees of freedom). n must be at least 2."""
    n = len(diffs)
    if n < 2:
        raise ValueError("a paired mean difference needs at least two pairs")
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    se = math.sqrt(var / n)
    half = t_quantile(0.975 if z == Z95 else _phi(z), n - 1) * se
    return mean, max(-1.0, mean - half), min(1.0, mean + half), se


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile (scipy.special's, imported here: importing the plugin stays cheap, and
    scipy.stats would take seconds more)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def t_upper_tail(x: float, df: int) -> float:
    """P(T > x) for Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


def _phi(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def paired_difference(both: int, rose: int, fell: int, n: int, z: float = Z95) -> tuple[float, float, float]:
    """(difference, low, high) of two paired shares over n pairs: Newcombe's score interval (method 10).

    ``both`` pairs are 1 on both sides, ``rose`` 1 only for the candidate, ``fell`` 1 only for the
    baseline. Built from the two Wilson intervals and the pairs' correlation, it stays sane with few
    discordant pairs, where the Wald interval claims far too much. n must be positive.
    """
    neither = n - both - rose - fell
    p1, p2 = (both + rose) / n, (both + fell) / n
    l1, u1 = wilson(both + rose, n, z)  # type: ignore[misc]
    l2, u2 = wilson(both + fell, n, z)  # type: ignore[misc]
    margins = (both + rose) * (fell + neither) * (both + fell) * (rose + neither)
    cross: float = both * neither - rose * fell
    if cross > 0:
        cross = max(cross - n / 2, 0)  # Newcombe's continuity-corrected correlation
    phi = cross / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return d, max(-1.0, low), min(1.0, high)


def paired_bootstrap(
    pairs: Sequence[tuple[int, int]], reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float, float]:
    """(difference, low, high) of the mean of candidate - baseline over paired 0/1 outcomes: the percentile
    interval resampling scenarios (``bootstrap_percentile``) from BOOTSTRAP_DISCORDANT_FROM discordant
    pairs; below, Newcombe's score interval (``paired_difference``), which holds where they are few.

    No p-value: one read off these resamples could not go below 1/reps (see scoring/paired.py for the
    test that goes with this interval).
    """
    if not pairs:
        raise ValueError("a paired bootstrap needs at least one pair")
    rose = sum(1 for base, cand in pairs if cand and not base)
    fell = sum(1 for base, cand in pairs if base and not cand)
    if rose + fell < BOOTSTRAP_DISCORDANT_FROM:
        both = sum(1 for base, cand in pairs if base and cand)
        return paired_difference(both, rose, fell, len(pairs))
    return bootstrap_percentile(pairs, reps, seed)


def bootstrap_percentile(
    pairs: Sequence[tuple[int, int]], reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float, float]:
    """(difference, low, high): the percentile interval of the mean of candidate - baseline over paired
    0/1 outcomes, resampling scenarios with replacement (any number of discordant pairs)."""
    if not pairs:
        raise ValueError("a paired bootstrap needs at least one pair")
    import numpy as np  # here, not at module level: importing the plugin stays cheap

    diffs = np.array([cand - base for base, cand in pairs], dtype=float)
    k = len(diffs)
    estimates = np.sort(resample_weights(reps, k, seed) @ diffs / k)
    return (
        float(diffs.mean()),
        float(estimates[int(0.025 * (reps - 1))]),
        float(estimates[int(math.ceil(0.975 * (reps - 1)))]),
    )


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which hypotheses are rejected at family-wise level ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] >= alpha / (m - rank):
            break
        rejected[i] = True
    return rejected
