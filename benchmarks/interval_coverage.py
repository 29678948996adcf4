"""How often each interval the suite prints covers the true value: ``python -m benchmarks.interval_coverage``.

For every interval of scoring/intervals.py that a run prints, at 10, 20, 30, 50, 100 and 300 items, over a
grid of true rates (0.02 to 0.98), the share of simulated data sets whose 95% interval holds the truth:

- ``wilson``: one case's DirErr (k of n items answered y); computed exactly, summing over every k.
- ``newcombe``: the paired difference of two runs' DirErr (``paired_difference``, the default method).
- ``paired_bootstrap``: the same difference, ``--paired-test=bootstrap``'s interval.
- ``cluster_bootstrap``: a pooled DirErr over n scenarios each asked in 4 cases (the report's categories).
- ``soft_t``: the mean paired difference of label probabilities (``t_difference``, the soft gate's, the
  interval its t-test inverts), and beside it ``soft_split``: an interval that assumes nothing about the
  differences but their range (each splits into a rise and a fall in [0, 1], Wilson bounds each, Newcombe
  joins them), the price of such an interval: it cannot exclude 0 for a consistent lean on a few dozen items.

Each is measured as the suite prints it, and, where the suite switches to another interval at small n,
also the interval it replaced (``<name>_raw``), so the table shows why. The criterion (docs/statistics-
and-gates.md, "Interval coverage"): an interval holds at n when its mean coverage over the grid is at least
93% and its smallest coverage over the central rates (0.1 to 0.9) at least 90%. Prints a table and writes
``reports/benchmarks/interval_coverage.{json,md}``. A few minutes on one core.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.common import OUT_DIR, write_json
from mathcomp_tests.scoring import intervals

SIZES = (10, 20, 30, 50, 100, 300)
RATES = (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98)
CENTRAL = (0.1, 0.9)
"""The central part of the grid, where the smallest coverage is judged."""
MEAN_FLOOR = 0.93
CENTRAL_FLOOR = 0.90
CASES_PER_SCENARIO = 4
"""cluster_bootstrap: how many cases share each scenario."""
SEED = 20261127

Interval = tuple[float, float]


@dataclass(frozen=True)
class Setting:
    """One point of the grid: the rate it is placed at, the truth, and a sampler of data sets."""

    rate: float
    truth: float
    draw: Callable[[np.random.Generator, int, int], Any]
    """(rng, n, sims) -> the simulated data sets, in whatever shape the interval takes."""


def covered(intervals_: Sequence[Interval], truth: float) -> float:
    hits = sum(1 for low, high in intervals_ if low - 1e-12 <= truth <= high + 1e-12)
    return hits / len(intervals_)


# --- wilson: exact ---------------------------------------------------------------------------------------


def binomial_coverage(interval: Callable[[int, int], Interval | None], n: int, p: float) -> float:
    """Exact coverage: the probability of every k whose interval holds p."""
    total = 0.0
    for k in range(n + 1):
        found = interval(k, n)
        assert found is not None
        if found[0] - 1e-12 <= p <= found[1] + 1e-12:
            total += math.comb(n, k) * p**k * (1 - p) ** (n - k)
    return total


# --- paired 0/1 answers ----------------------------------------------------------------------------------


def paired_settings() -> Iterator[tuple[str, Setting]]:
    """Base rate p; the candidate copies the base's answer with probability rho, else answers y with
    probability p' (p' = p: no change; p' = p + 0.3: a rise). The truth is the difference of the shares."""
    for rho in (0.9, 0.6):
        for p in RATES:
            for shifted in (p, min(0.98, p + 0.3)):
                cells = _cells(p, rho, shifted)
                yield f"rho {rho}", Setting(p, cells[1] - cells[2], _paired_draw(cells))


def _cells(p: float, rho: float, shifted: float) -> tuple[float, float, float, float]:
    """(both, rose, fell, neither) probabilities."""
    both = p * (rho + (1 - rho) * shifted)
    rose = (1 - p) * (1 - rho) * shifted
    fell = p * (1 - rho) * (1 - shifted)
    return both, rose, fell, 1 - both - rose - fell


def _paired_draw(cells: tuple[float, float, float, float]) -> Callable[[np.random.Generator, int, int], Any]:
    def draw(rng: np.random.Generator, n: int, sims: int) -> Any:
        return rng.choice(
            4, size=(sims, n), p=np.array(cells) / sum(cells)
        )  # 0 both, 1 rose, 2 fell, 3 neither

    return draw


def newcombe(samples: Any) -> list[Interval]:
    n = samples.shape[1]
    out = []
    for row in samples:
        counts = np.bincount(row, minlength=4)
        _, low, high = intervals.paired_difference(int(counts[0]), int(counts[1]), int(counts[2]), n)
        out.append((low, high))
    return out


def percentile_bootstrap(samples: Any) -> list[Interval]:
    """intervals.bootstrap_percentile for many data sets at once: the same resampling weights (the
    suite's seed), one matrix product (checked against the function in ``check_vectorised``)."""
    sims, n = samples.shape
    reps = intervals.BOOTSTRAP_REPS
    diffs = (samples == 1).astype(float) - (samples == 2).astype(float)
    estimates = np.sort(intervals.resample_weights(reps, n, intervals.BOOTSTRAP_SEED) @ diffs.T / n, axis=0)
    low, high = estimates[int(0.025 * (reps - 1))], estimates[int(math.ceil(0.975 * (reps - 1)))]
    return list(zip(low.tolist(), high.tolist(), strict=True))


def printed_bootstrap(samples: Any) -> list[Interval]:
    """intervals.paired_bootstrap as the suite prints it: Newcombe's interval below
    BOOTSTRAP_DISCORDANT_FROM discordant pairs, the percentile interval from there."""
    few = ((samples == 1) | (samples == 2)).sum(axis=1) < intervals.BOOTSTRAP_DISCORDANT_FROM
    out = percentile_bootstrap(samples)
    if few.any():
        for i, found in zip(np.flatnonzero(few), newcombe(samples[few]), strict=True):
            out[i] = found
    return out


def _pairs(row: Any) -> list[tuple[int, int]]:
    return [{0: (1, 1), 1: (0, 1), 2: (1, 0), 3: (0, 0)}[int(x)] for x in row]


# --- pooled over cases sharing scenarios -----------------------------------------------------------------


def cluster_settings() -> Iterator[tuple[str, Setting]]:
    """Each scenario has its own rate, Beta with mean p and concentration kappa (1: cases agree on a
    scenario far more than chance; 10: a little); each of its 4 cases answers y with that rate."""
    for kappa in (1.0, 10.0):
        for p in RATES:
            yield f"kappa {kappa:g}", Setting(p, p, _cluster_draw(p, kappa))


def _cluster_draw(p: float, kappa: float) -> Callable[[np.random.Generator, int, int], Any]:
    def draw(rng: np.random.Generator, n: int, sims: int) -> Any:
        rates = rng.beta(p * kappa, (1 - p) * kappa, size=(sims, n))
        return rng.binomial(CASES_PER_SCENARIO, rates)  # hits per scenario, of CASES_PER_SCENARIO

    return draw


def percentile_cluster(samples: Any) -> list[Interval]:
    """intervals.cluster_percentile for many data sets at once (the same weights, one matrix product)."""
    sims, k = samples.shape
    reps = intervals.BOOTSTRAP_REPS
    weights = intervals.resample_weights(reps, k, intervals.BOOTSTRAP_SEED)
    items = CASES_PER_SCENARIO * weights.sum(axis=1)[:, None]
    ratios = np.sort((weights @ samples.T.astype(float)) / items, axis=0)
    low, high = ratios[int(0.025 * (reps - 1))], ratios[int(math.ceil(0.975 * (reps - 1)))]
    return list(zip(low.tolist(), high.tolist(), strict=True))


def printed_cluster(samples: Any) -> list[Interval]:
    """intervals.cluster_bootstrap as the suite prints it: design-effect Wilson below
    CLUSTER_BOOTSTRAP_FROM scenarios, the percentile bootstrap from there."""
    if samples.shape[1] >= intervals.CLUSTER_BOOTSTRAP_FROM:
        return percentile_cluster(samples)
    return [intervals.design_effect_wilson([(int(h), CASES_PER_SCENARIO) for h in row]) for row in samples]


def _some(found: Interval | None) -> Interval:
    assert found is not None
    return found


def _clusters(row: Any) -> dict[str, list[tuple[int, int]]]:
    return {str(i): [(int(h), CASES_PER_SCENARIO)] for i, h in enumerate(row)}


# --- soft: paired differences of label probabilities -----------------------------------------------------


def soft_settings() -> Iterator[tuple[str, Setting]]:
    """The base's probability of y on an item is Beta with mean p and concentration kappa (2: most items
    near 0 or 1, as a confident model's; 10: spread); the candidate keeps the item's probability with
    probability 1/2, else draws its own with mean p' (p' = p, or p + 0.2). The truth is the mean difference."""
    for kappa in (2.0, 10.0):
        for p in RATES:
            for shifted in (p, min(0.98, p + 0.2)):
                yield f"kappa {kappa:g}", Setting(p, 0.5 * (shifted - p), _soft_draw(p, shifted, kappa))


def _soft_draw(p: float, shifted: float, kappa: float) -> Callable[[np.random.Generator, int, int], Any]:
    def draw(rng: np.random.Generator, n: int, sims: int) -> Any:
        base = rng.beta(p * kappa, (1 - p) * kappa, size=(sims, n))
        own = rng.beta(shifted * kappa, (1 - shifted) * kappa, size=(sims, n))
        keep = rng.random((sims, n)) < 0.5
        return np.where(keep, base, own) - base

    return draw


def t_interval(samples: Any) -> list[Interval]:
    """intervals.t_difference for many data sets at once: the same t interval, in numpy."""
    n = samples.shape[1]
    mean = samples.mean(axis=1)
    se = samples.std(axis=1, ddof=1) / math.sqrt(n)
    half = intervals.t_quantile(0.975, n - 1) * se
    return list(zip(np.maximum(-1, mean - half).tolist(), np.minimum(1, mean + half).tolist(), strict=True))


def split_score(samples: Any, z: float = intervals.Z95) -> list[Interval]:
    """The assumption-free comparison: each difference's rise max(d, 0) and fall max(-d, 0) lie in [0, 1],
    so each mean's variance is at most m(1 - m); Wilson's score interval bounds each, Newcombe's
    square-and-add joins them with the parts' correlation."""
    rises, falls = np.maximum(samples, 0), np.maximum(-samples, 0)
    (m1, l1, u1), (m2, l2, u2) = (_wilson_of_means(part, z) for part in (rises, falls))
    cov = ((rises - m1[:, None]) * (falls - m2[:, None])).sum(axis=1)
    spread = np.sqrt(((rises - m1[:, None]) ** 2).sum(axis=1) * ((falls - m2[:, None]) ** 2).sum(axis=1))
    phi = np.divide(cov, spread, out=np.zeros(len(samples)), where=spread > 0)
    low = m1 - m2 - np.sqrt(np.maximum(0, (m1 - l1) ** 2 - 2 * phi * (m1 - l1) * (u2 - m2) + (u2 - m2) ** 2))
    high = m1 - m2 + np.sqrt(np.maximum(0, (u1 - m1) ** 2 - 2 * phi * (u1 - m1) * (m2 - l2) + (m2 - l2) ** 2))
    return list(zip(np.maximum(-1, low).tolist(), np.minimum(1, high).tolist(), strict=True))


def _wilson_of_means(parts: Any, z: float) -> tuple[Any, Any, Any]:
    n = parts.shape[1]
    m = parts.mean(axis=1)
    centre = (m + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(np.maximum(0, m * (1 - m)) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return m, np.maximum(0, centre - half), np.minimum(1, centre + half)


# --- the run ---------------------------------------------------------------------------------------------


def check_vectorised(rng: np.random.Generator) -> None:
    """The numpy versions give the functions' own intervals, on a few data sets of every size."""
    for n in SIZES:
        paired = rng.choice(4, size=(4, n), p=[0.1, 0.2, 0.1, 0.6])
        paired[0] = 0  # no discordant pair
        want = [intervals.bootstrap_percentile(_pairs(r))[1:] for r in paired]
        assert np.allclose(percentile_bootstrap(paired), want)
        assert np.allclose(
            printed_bootstrap(paired), [intervals.paired_bootstrap(_pairs(r))[1:] for r in paired]
        )
        pooled = rng.binomial(CASES_PER_SCENARIO, 0.3, size=(3, n))
        assert np.allclose(
            percentile_cluster(pooled), [_some(intervals.cluster_percentile(_clusters(r))) for r in pooled]
        )
        assert np.allclose(
            printed_cluster(pooled), [_some(intervals.cluster_bootstrap(_clusters(r))) for r in pooled]
        )
        soft = rng.random((3, n)) - 0.4
        assert np.allclose(t_interval(soft), [intervals.t_difference(r.tolist())[1:3] for r in soft])


Measured = tuple[Callable[[], Iterator[tuple[str, Setting]]], Callable[[Any], list[Interval]]]
INTERVALS: dict[str, Measured] = {
    "newcombe": (paired_settings, newcombe),
    "paired_bootstrap": (paired_settings, printed_bootstrap),
    "paired_bootstrap_raw": (paired_settings, percentile_bootstrap),
    "cluster_bootstrap": (cluster_settings, printed_cluster),
    "cluster_bootstrap_raw": (cluster_settings, percentile_cluster),
    "soft_t": (soft_settings, t_interval),
    "soft_split": (soft_settings, split_score),
}
"""Each interval as printed, (``_raw``) the one it replaces below its threshold, and (``soft_split``) the
assumption-free interval the soft test does not print."""


def summarise(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    values = [p["coverage"] for p in points]
    central = [p["coverage"] for p in points if CENTRAL[0] <= p["rate"] <= CENTRAL[1]]
    worst = min(points, key=lambda p: p["coverage"])
    mean, least = sum(values) / len(values), min(central)
    return {
        "mean": round(mean, 4),
        "min": round(worst["coverage"], 4),
        "min_at": {k: worst[k] for k in ("rate", "family", "truth")},
        "min_central": round(least, 4),
        "holds": mean >= MEAN_FLOOR and least >= CENTRAL_FLOOR,
    }


def measure(sims: int, sizes: Sequence[int], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each interval's summary per n. Every interval of one kind of data (paired answers, pooled answers,
    probability differences) sees the same simulated data sets, so printed and raw compare like for like."""
    results: dict[str, dict[str, Any]] = {}
    if "wilson" in names:
        results["wilson"] = {
            str(n): summarise(
                [
                    {
                        "rate": p,
                        "family": "binomial",
                        "truth": p,
                        "coverage": binomial_coverage(intervals.wilson, n, p),
                    }
                    for p in RATES
                ]
            )
            for n in sizes
        }
    for name in names:
        if name not in INTERVALS:
            continue
        settings, interval = INTERVALS[name]
        kind = list(DATA).index(settings.__name__)
        per_n = {}
        for n in sizes:
            points = []
            for index, (family, setting) in enumerate(settings()):
                samples = setting.draw(np.random.default_rng((SEED, kind, n, index)), n, sims)
                coverage = covered(interval(samples), setting.truth)
                points.append(
                    {
                        "rate": setting.rate,
                        "family": family,
                        "truth": round(setting.truth, 4),
                        "coverage": coverage,
                    }
                )
            per_n[str(n)] = summary = summarise(points)
            print(f"  {name} n={n}: mean {summary['mean']:.3f}, smallest {summary['min']:.3f}", flush=True)
        results[name] = per_n
    return results


DATA = ("paired_settings", "cluster_settings", "soft_settings")


def table(results: dict[str, dict[str, Any]], sizes: Sequence[int]) -> list[str]:
    head = "| interval | " + " | ".join(f"n = {n}" for n in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    for name, per_n in results.items():
        cells = []
        for n in sizes:
            s = per_n[str(n)]
            mark = "" if s["holds"] else " **x**"
            cells.append(f"{100 * s['mean']:.1f} / {100 * s['min']:.1f} / {100 * s['min_central']:.1f}{mark}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sims", type=int, default=1000, help="simulated data sets per grid point (default 1000)"
    )
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated numbers of items")
    parser.add_argument("--only", default="", help="comma-separated interval names (default: all)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [n for n in args.only.split(",") if n] or ["wilson", *INTERVALS]
    started = time.perf_counter()
    check_vectorised(np.random.default_rng(1))
    results = measure(args.sims, sizes, names)
    seconds = round(time.perf_counter() - started, 1)
    lines = [
        f"coverage of the suite's 95% intervals: mean over the grid / smallest / smallest over rates "
        f"{CENTRAL[0]}-{CENTRAL[1]} (%), {args.sims} simulated data sets per grid point (wilson: exact); "
        f"**x**: below the criterion (mean {100 * MEAN_FLOOR:g}%, central minimum {100 * CENTRAL_FLOOR:g}%)",
        "",
        *table(results, sizes),
        "",
        f"({seconds} s)",
    ]
    text = "\n".join(lines)
    print(text)
    write_json(
        "interval_coverage",
        {"sims": args.sims, "sizes": sizes, "rates": list(RATES), "results": results, "seconds": seconds},
    )
    (OUT_DIR / "interval_coverage.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
