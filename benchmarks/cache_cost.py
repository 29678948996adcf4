"""What the response cache costs on the largest cheap run: the symbolic reference over the full one-word
matrix with the paper's identities (7 framings x 2 positions x 8 identities = 112 cases, 300 scenarios each).

Three runs of the real suite in subprocesses, as a user types them: a fresh cache (every answer computed
and written), the same cache again (every answer read), and `--no-cache`. The goal set for the cache:
cold within 1.5x of no-cache, warm under 5 s in all. Also the start-up alone (`--collect-only`).

Prints the numbers and writes reports/benchmarks/cache_cost.json.

    .venv/bin/python benchmarks/cache_cost.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "reports" / "benchmarks" / "cache_cost.json"
PAPER_IDENTITIES = "std,woman,man,black,white,asian,hispanic,african"
MATRIX = (
    "--model=symbolic",
    f"--identities={PAPER_IDENTITIES}",
    "--formats=one-word",
    "-k",
    "test_framing",
    "-q",
    "-p",
    "no:cacheprovider",
)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=900
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return elapsed, proc.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run: imports read compiled bytecode
    runs: dict[str, list[float]] = {"startup": [], "cold": [], "warm": [], "no-cache": []}
    last = ""
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="mathcomp-bench-") as tmp:
            reports, cache = f"--reports-dir={tmp}/reports", f"--cache-dir={tmp}/cache"
            timed([*MATRIX, reports, cache, "--collect-only"], env)  # warms the dataset check and bytecode
            runs["startup"].append(timed([*MATRIX, reports, cache, "--collect-only"], env)[0])
            (Path(tmp) / "cache" / "responses.sqlite").unlink(missing_ok=True)
            runs["cold"].append(timed([*MATRIX, reports, cache], env)[0])
            runs["warm"].append(timed([*MATRIX, reports, cache], env)[0])
            elapsed, last = timed([*MATRIX, reports, cache, "--no-cache"], env)
            runs["no-cache"].append(elapsed)
    median = {name: statistics.median(values) for name, values in runs.items()}
    result: dict[str, Any] = {
        "what": "symbolic backend, one-word matrix, the paper's identities, pytest end to end incl. report",
        "pytest_says": last,
        "seconds_median": median,
        "seconds_all": runs,
        "cold_over_no_cache": median["cold"] / median["no-cache"],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
    }
    for name, value in median.items():
        print(f"{name:>9}: {value:6.2f} s (median of {args.repeat})")
    print(f"cold / no-cache: {result['cold_over_no_cache']:.2f}x   ({last})")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
