"""What the response cache costs on the largest cheap run: the symbolic reference over the full one-word
matrix with the paper's identities (7 framings x 2 positions x 8 identities = 112 cases, 300 scenarios each).

Three runs of the real suite in subprocesses, as a user types them: a fresh cache (every answer computed
and written), the same cache again (every answer read), and `--no-cache`. The goal set for the cache:
cold within 1.5x of no-cache, warm under 5 s in all. Also the start-up alone (`--collect-only`).

Prints the numbers and writes reports/benchmarks/cache_cost.json.

    .venv/bin/python -m benchmarks.cache_cost [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import checked, load, pytest_command, run_tracked, suite_env, write_json

REPO = Path(__file__).resolve().parents[1]
PAPER_IDENTITIES = "std,woman,man,black,white,asian,hispanic,african"
MATRIX = (
    "--model=symbolic",
    f"--identities={PAPER_IDENTITIES}",
    "--formats=one-word",
    "-k",
    "test_framing",
)


def timed(args: list[str], env: dict[str, str], memory: list[float] | None = None) -> tuple[float, str]:
    result = checked(run_tracked(pytest_command(*args), env=env, timeout=900), "pytest " + " ".join(args))
    if memory is not None:
        memory.append(result.peak_rss_mib)
    return result.seconds, result.last_line()


def measure(repeat: int) -> dict[str, Any]:
    """Medians of ``repeat`` rounds of start-up, cold, warm and no-cache runs, with peak memory."""
    env = suite_env()  # as users run: imports read compiled bytecode
    runs: dict[str, list[float]] = {"startup": [], "cold": [], "warm": [], "no-cache": []}
    rss: list[float] = []
    last = ""
    before = load()
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="mathcomp-bench-") as tmp:
            reports, cache = f"--reports-dir={tmp}/reports", f"--cache-dir={tmp}/cache"
            timed([*MATRIX, reports, cache, "--collect-only"], env)  # warms the dataset check and bytecode
            runs["startup"].append(timed([*MATRIX, reports, cache, "--collect-only"], env)[0])
            (Path(tmp) / "cache" / "responses.sqlite").unlink(missing_ok=True)
            runs["cold"].append(timed([*MATRIX, reports, cache], env, rss)[0])
            runs["warm"].append(timed([*MATRIX, reports, cache], env)[0])
            elapsed, last = timed([*MATRIX, reports, cache, "--no-cache"], env)
            runs["no-cache"].append(elapsed)
    median = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "what": "symbolic backend, one-word matrix, the paper's identities, pytest end to end incl. report",
        "pytest_says": last,
        "seconds_median": median,
        "seconds_all": runs,
        "cold_over_no_cache": median["cold"] / median["no-cache"],
        "peak_rss_mib_cold": max(rss),
        "load_before": before,
        "load_after": load(),
        "date": time.strftime("%Y-%m-%d"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    result = measure(args.repeat)
    for name, value in result["seconds_median"].items():
        print(f"{name:>9}: {value:6.2f} s (median of {args.repeat})")
    print(f"cold / no-cache: {result['cold_over_no_cache']:.2f}x   ({result['pytest_says']})")
    print(f"wrote {write_json('cache_cost', result).relative_to(REPO)}")


if __name__ == "__main__":
    main()
