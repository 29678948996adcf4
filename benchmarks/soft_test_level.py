"""How often the soft test finds a rise where there is none: ``python -m benchmarks.soft_test_level``.

The soft gate's one-sided paired t-test (scoring/soft_paired.py) prints the t interval beside its p at
every number of pairs; below 50 pairs that interval misses the coverage criterion on skewed label
probabilities (benchmarks/interval_coverage.py). What the gate decides is whether the fine-tune moved the
probabilities at all, so this measures the test where it did not: on every setting of interval_coverage's
soft grid whose candidate draws from the base's own distribution (the true mean difference is 0), the
share of simulated data sets the test calls a rise at a one-sided level of 5% and of 0.5%, at 10 to 300
pairs. Prints a table and writes ``reports/benchmarks/soft_test_level.json``. Under a minute on one core.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from benchmarks.common import write_json
from benchmarks.interval_coverage import SEED, SIZES, soft_settings
from mathcomp_tests.scoring import intervals

LEVELS = (0.05, 0.005)


def rejection_rates(sims: int, n: int, level: float) -> list[float]:
    """The test's rejection rate at ``level`` on each null setting of the soft grid, ``sims`` data sets each."""
    rates = []
    critical = intervals.t_quantile(1 - level, n - 1)
    for index, (_, setting) in enumerate(soft_settings()):
        if setting.truth != 0:
            continue
        diffs = setting.draw(np.random.default_rng((SEED, 7, n, index)), n, sims)
        mean, se = diffs.mean(axis=1), diffs.std(axis=1, ddof=1) / math.sqrt(n)
        rates.append(float(((se > 0) & (mean > critical * se)).mean()))
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sims", type=int, default=4000, help="simulated data sets per setting (default 4000)"
    )
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated numbers of pairs")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    results: dict[str, Any] = {}
    lines = ["| level | " + " | ".join(f"n = {n}" for n in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for level in LEVELS:
        per_n = {str(n): rejection_rates(args.sims, n, level) for n in sizes}
        results[f"{level:g}"] = {
            n: {"mean": round(sum(r) / len(r), 4), "max": round(max(r), 4), "settings": len(r)}
            for n, r in per_n.items()
        }
        cells = [
            f"{100 * results[f'{level:g}'][str(n)]['mean']:.2f} / {100 * results[f'{level:g}'][str(n)]['max']:.2f}"
            for n in sizes
        ]
        lines.append(f"| {100 * level:g}% | " + " | ".join(cells) + " |")
    seconds = round(time.perf_counter() - started, 1)
    print(
        f"the soft t-test's rejection rate where the true mean difference is 0: mean / largest over the "
        f"null settings (%), {args.sims} simulated data sets each, {seconds} s"
    )
    print("\n".join(lines))
    write_json("soft_test_level", {"sims": args.sims, "sizes": sizes, "results": results, "seconds": seconds})
    return 0


def table_rows(r: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The benchmark table's row (benchmarks/table.py)."""
    sizes = [str(n) for n in r["sizes"]]
    cells = [
        f"at {100 * float(level):g}%: " + " / ".join(f"{100 * per_n[n]['max']:.2f}" for n in sizes)
        for level, per_n in r["results"].items()
    ]
    return [
        (
            f"the soft t-test's largest rejection rate where nothing moved, over the soft grid's null settings, "
            f"at n = {', '.join(sizes)} pairs ({r['sims']} simulated data sets a setting)",
            "`python -m benchmarks.soft_test_level`",
            "; ".join(cells) + " %",
        )
    ]


if __name__ == "__main__":
    sys.exit(main())
