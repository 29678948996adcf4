"""How long a night lasts against a server that never answers or answers only errors, with the defaults:
``python -m benchmarks.bounded_nights``.

Runs the suite (the default matrix, no option but the model, --api-base and the path) against the fault
server of tests/helpers/fault_server.py: one that holds every completion request open while its model list
and health check answer, one that answers every request 500, one 429; each on the chat path (a litellm
Router) and the batched /v1/completions path. Reports each run's wall time (pytest's start-up included),
the requests the server got and the last line of the error. The defaults' promise: under 150 s each.
Prints a table and writes reports/benchmarks/bounded_nights.json.

    .venv/bin/python -m benchmarks.bounded_nights [--only stall,500,429] [--paths chat,completions]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.fault_server import Fault, FaultServer  # noqa: E402

OUT = REPO / "reports" / "benchmarks" / "bounded_nights.json"
TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"
FAULTS = {"stall": Fault("hang", delay=900), "500": Fault("server-error"), "429": Fault("rate-limit")}
BOUND = 150.0


def night(fault: str, path: str) -> dict[str, Any]:
    """One run of the suite with the defaults against a server that always answers with ``fault``."""
    listed = [{"id": "tiny", "object": "model", "root": str(TOKENIZER), "max_model_len": 1024}]
    server = FaultServer(schedule=lambda index, attempt: FAULTS[fault], models=listed, lifetime=900)
    with tempfile.TemporaryDirectory() as work, server.running():
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={work}/reports"]
        command += [f"--cache-dir={work}/cache", "--model=openai/tiny", f"--api-base={server.url}"]
        command += [f"--api-batching={path}"]
        started = time.monotonic()
        proc = subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, timeout=900, env=os.environ.copy()
        )
        took = time.monotonic() - started
        requests = server.requests()
    gone = [line for line in proc.stdout.splitlines() if "Interrupted: the model server" in line]
    return {
        "fault": fault,
        "path": path,
        "seconds": round(took, 1),
        "requests": len(requests),
        "prompts_sent": sum(r.prompts for r in requests),
        "exit": proc.returncode,
        "error": gone[-1].strip("! ") if gone else proc.stdout.strip().splitlines()[-1],
        "within_bound": took < BOUND,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default="stall,500,429")
    parser.add_argument("--paths", default="chat,completions")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = [night(f, p) for f in args.only.split(",") for p in args.paths.split(",")]
    for row in rows:
        print(
            f"{row['fault']:>6} {row['path']:<12} {row['seconds']:>7.1f} s {row['requests']:>5} requests",
            row["error"][:160],
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps({"load_before": load_before, "load_after": os.getloadavg()[0], "runs": rows}, indent=2)
    )


if __name__ == "__main__":
    main()
