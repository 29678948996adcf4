"""What --invariance costs on chain-of-thought answers: the demo model, --formats=cot --limit=20 (28 cases,
12 cue cases compared with their neutral partners, explanation drift included), the answers already in
the cache, so that what is left is scoring, drift's sentence encoder and the report.

Two runs of the real suite in subprocesses, as a user types them, after one run that fills the cache:
without --invariance and with it. Prints the numbers and writes reports/benchmarks/invariance_drift.json.

    .venv/bin/python -m benchmarks.invariance_drift [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from benchmarks.common import checked, load, pytest_command, run_tracked, suite_env, write_json

ARGS = ("--formats=cot", "--limit=20")


def measure(repeat: int) -> dict[str, Any]:
    env = suite_env()
    runs: dict[str, list[float]] = {"without": [], "with --invariance": []}
    before = load()
    with tempfile.TemporaryDirectory(prefix="mathcomp-bench-") as tmp:
        folders = (f"--reports-dir={tmp}/reports", f"--cache-dir={tmp}/cache")
        checked(run_tracked(pytest_command(*ARGS, *folders), env=env), "filling the cache", ok=(0, 1))
        for _ in range(repeat):
            for name, extra in (("without", ()), ("with --invariance", ("--invariance",))):
                result = run_tracked(pytest_command(*ARGS, *folders, *extra), env=env)
                runs[name].append(checked(result, f"pytest {name}", ok=(0, 1)).seconds)
    median = {name: statistics.median(values) for name, values in runs.items()}
    return {
        "what": "demo model, --formats=cot --limit=20, answers cached; pytest end to end incl. report",
        "seconds_median": median,
        "seconds_all": runs,
        "load_before": before,
        "load_after": load(),
        "date": time.strftime("%Y-%m-%d"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    result = measure(parser.parse_args().repeat)
    for name, value in result["seconds_median"].items():
        print(f"{name}: {value:.1f} s")
    print(
        f"load {result['load_before']} -> {result['load_after']}; wrote {write_json('invariance_drift', result)}"
    )


if __name__ == "__main__":
    main()
