"""The batch path against the live path: ``python -m benchmarks.batch_api [--limit 50] [--rps 5]``.

One suite run (the paper's 7 framings x 2 positions, ``--limit`` scenarios each) against the FAKE of
OpenAI's Files and Batches endpoints (tests/helpers/fake_batch_server.py), whose live chat endpoint
allows ``--rps`` requests a second (429 with Retry-After: 1 beyond it, as a provider's rate limit does)
and whose batches answer ``--batch-delay`` seconds after they are created, outside that limit. Each path
starts from an empty cache. Prints and writes reports/benchmarks/batch_api.json: wall time, live chat
requests (429s included), batches and batch endpoint requests, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from helpers.fake_batch_server import BatchServer  # noqa: E402
from helpers.fault_server import OK, Fault, always_ok  # noqa: E402

from benchmarks.common import load, suite_env, write_json  # noqa: E402


class RateLimit:
    """A schedule that answers at most ``rps`` chat requests in any second, 429 beyond."""

    def __init__(self, rps: int):
        self.rps, self.lock = rps, threading.Lock()
        self.times: list[float] = []

    def __call__(self, index: int, attempt: int) -> Fault:
        now = time.monotonic()
        with self.lock:
            self.times = [t for t in self.times if now - t < 1.0]
            if len(self.times) >= self.rps:
                return Fault("rate-limit", retry_after=1)
            self.times.append(now)
        return OK


def run(path: str, limit: int, rps: int, delay: float) -> dict[str, Any]:
    server = BatchServer(schedule=RateLimit(rps), batch_schedule=always_ok, delay=delay, lifetime=3600)
    with server.running(), tempfile.TemporaryDirectory() as tmp:
        ceilings = Path(tmp) / "thresholds.toml"  # the fake answers `more` to everything: gate nothing
        ceilings.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--reports-dir={tmp}/r"]
        command += [f"--thresholds={ceilings}"]
        command += [f"--cache-dir={tmp}/c", "--model=openai/gpt-4o-mini", f"--api-base={server.url}"]
        command += [f"--limit={limit}", "--deselect=mathcomp_tests/suite/test_generated.py", "--max-error-rate=1"]
        command += ["--server-timeout=600", "--num-retries=20"]
        command += ["--batch", "--batch-poll=1"] if path == "batch" else []
        before = load()
        start = time.monotonic()
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=suite_env())
        wall = time.monotonic() - start
        return {
            "path": path,
            "exit": proc.returncode,
            "wall_s": round(wall, 1),
            "chat_requests": server.chat_requests(),
            "chat_429": sum(1 for r in server.requests() if r.fault == "rate-limit"),
            "batches": len(server.created),
            "batch_endpoint_requests": len(server.batch_requests),
            "load_before": before,
            "load_after": load(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--rps", type=int, default=5)
    parser.add_argument("--batch-delay", type=float, default=5.0)
    args = parser.parse_args()
    rows = [run(path, args.limit, args.rps, args.batch_delay) for path in ("live", "batch")]
    for row in rows:
        print(row)
    write_json("batch_api", {"limit": args.limit, "rps": args.rps, "batch_delay": args.batch_delay, "runs": rows})


if __name__ == "__main__":
    main()
