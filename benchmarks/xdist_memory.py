"""xdist scaling and peak memory of whole suite runs: ``python -m benchmarks.xdist_memory``.

The symbolic reference over the one-word matrix with the paper's identities (112 cases, 33,600 prompts)
and the embedded model (hf:fixtures/models/mathcomp-tiny, the default 14 cases, 4,200 prompts), each
under pytest without xdist, with ``-n 1`` and with ``-n 2``, a fresh cache every time (every prompt
asked). Memory is the peak resident set of the whole process tree (pytest and its xdist workers,
sampled every 50 ms) and of its largest single process. The api backend's memory is measured by
benchmarks/api_concurrency.py (its pytest runs). Prints the numbers and writes
reports/benchmarks/xdist_memory.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from typing import Any

from benchmarks.common import PAPER_IDENTITIES, ROOT, checked, load, pytest_command, run_tracked, write_json

SUITES = {
    "symbolic": [
        "--model=symbolic",
        f"--identities={PAPER_IDENTITIES}",
        "--formats=one-word",
        "-k",
        "test_framing",
    ],
    "hf": ["--model=hf:fixtures/models/mathcomp-tiny", "--formats=one-word", "-k", "test_framing"],
}
QUICK = {"symbolic": ["--identities=std"], "hf": ["--limit=60"]}
WORKERS = ("0", "1", "2")
"""0: no xdist (one process); 1 and 2: xdist workers besides the controller."""


def measure(quick: bool, hf_limit: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, args in SUITES.items():
        extra = QUICK[name] if quick else []
        if name == "hf" and hf_limit and not quick:
            extra = [f"--limit={hf_limit}"]
        for n in WORKERS:
            with tempfile.TemporaryDirectory(prefix="mathcomp-xdist-") as tmp:
                command = pytest_command(
                    *args, *extra, f"--reports-dir={tmp}/reports", f"--cache-dir={tmp}/cache", "-n", n
                )
                before = load()
                result = checked(run_tracked(command, timeout=1200), " ".join(command), ok=(0, 1))
                out.setdefault(name, {})[f"-n {n}"] = {
                    "seconds": result.seconds,
                    "peak_rss_mib": result.peak_rss_mib,
                    "peak_single_rss_mib": result.peak_single_rss_mib,
                    "pytest_says": result.last_line(),
                    "load_before": before,
                    "load_after": load(),
                }
        runs = out[name]
        runs["speedup_n2_over_n1"] = round(runs["-n 1"]["seconds"] / runs["-n 2"]["seconds"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="14 symbolic cases; 60 scenarios for hf")
    parser.add_argument("--hf-limit", type=int, default=None, help="the first N scenarios in the hf suite")
    args = parser.parse_args()
    result = {
        "benchmark": "xdist_memory",
        "quick": args.quick,
        "hf_limit": args.hf_limit,
        "suites": measure(args.quick, args.hf_limit),
    }
    print(json.dumps(result, indent=2))
    print(f"written: {write_json('xdist_memory', result).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
