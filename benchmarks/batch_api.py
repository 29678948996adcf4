"""The batch path against the live path: ``python -m benchmarks.batch_api [--limit 50] [--rps 5]``.

For each provider (``--providers``, default openai,anthropic), one suite run per path (the paper's 7
framings x 2 positions, ``--limit`` scenarios each) against a FAKE of its endpoints
(tests/helpers/fake_batch_server.py: OpenAI's Files and Batches; tests/helpers/fake_anthropic_server.py:
Anthropic's Messages and Message Batches), whose live endpoint allows ``--rps`` requests a second (429
with Retry-After: 1 beyond it, as a provider's rate limit does) and whose batches answer
``--batch-delay`` seconds after they are created, outside that limit. Each run starts from an empty
cache. Prints and writes reports/benchmarks/batch_api.json: wall time, live requests (429s included),
batches and batch endpoint requests, and the load average before and after.
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

from helpers.fake_anthropic_server import AnthropicServer  # noqa: E402
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


MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}


def run(provider: str, path: str, limit: int, rps: int, delay: float) -> dict[str, Any]:
    fake = AnthropicServer if provider == "anthropic" else BatchServer
    server = fake(schedule=RateLimit(rps), batch_schedule=always_ok, delay=delay, lifetime=3600)
    with server.running(), tempfile.TemporaryDirectory() as tmp:
        base = server.base if isinstance(server, AnthropicServer) else server.url
        ceilings = Path(tmp) / "thresholds.toml"  # the fake answers `more` to everything: gate nothing
        ceilings.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--reports-dir={tmp}/r"]
        command += [f"--thresholds={ceilings}"]
        command += [f"--cache-dir={tmp}/c", f"--model={MODELS[provider]}", f"--api-base={base}"]
        command += [f"--limit={limit}", "--deselect=mathcomp_tests/suite/test_generated.py", "--max-error-rate=1"]
        command += ["--server-timeout=600", "--num-retries=20"]
        command += ["--batch", "--batch-poll=1"] if path == "batch" else []
        before = load()
        start = time.monotonic()
        env = {**suite_env(), "ANTHROPIC_API_KEY": "sk-ant-benchmark"}  # the fake wants a key, any key
        proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
        wall = time.monotonic() - start
        return {
            "provider": provider,
            "path": path,
            "exit": proc.returncode,
            "wall_s": round(wall, 1),
            "live_requests": len(server.requests()),
            "live_429": sum(1 for r in server.requests() if r.fault == "rate-limit"),
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
    parser.add_argument("--providers", default="openai,anthropic", help="comma-separated: openai, anthropic")
    args = parser.parse_args()
    providers = [p.strip() for p in args.providers.split(",") if p.strip()]
    unknown = sorted(set(providers) - set(MODELS))
    if unknown:
        parser.error(f"--providers: unknown {', '.join(unknown)}; expected some of {', '.join(MODELS)}")
    rows = [run(p, path, args.limit, args.rps, args.batch_delay) for p in providers for path in ("live", "batch")]
    for row in rows:
        print(row)
    write_json("batch_api", {"limit": args.limit, "rps": args.rps, "batch_delay": args.batch_delay, "runs": rows})


if __name__ == "__main__":
    main()
