"""How close the api backend gets to ideal concurrency against a local server with a fixed latency.

1,000 prompts at concurrency 100 against a server that answers each in 100 ms: the ideal is
1000 / 100 x 0.1 s = 1 s. The server runs in its own process (tests/fault_server.py) so that it does not
compete with the client for the interpreter. Three ways of sending:

- `backend`: one process, APIBackend alone (litellm Router, 100 requests in flight);
- `backend+cache`: the same through the sqlite cache, each response stored as it arrives (a real run);
- `N processes`: the prompts split over N processes with concurrency 100/N each (`pytest -n N`).

Prints the numbers and writes reports/benchmarks/api_concurrency.json.

    .venv/bin/python benchmarks/api_concurrency.py [--prompts 1000] [--concurrency 100] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mathcomp_tests import prompts as prompt_sets  # noqa: E402
from mathcomp_tests.backends.api import APIBackend  # noqa: E402
from mathcomp_tests.backends.cache import CachedBackend, ResponseCache  # noqa: E402
from mathcomp_tests.backends.options import BackendOptions  # noqa: E402
from mathcomp_tests.data import scenarios  # noqa: E402
from mathcomp_tests.types import FRAMINGS, POSITIONS, Condition, Decoding, Prompt  # noqa: E402

MODEL = "openai/benchmark"
DECODING = Decoding(max_new_tokens=8)


def build_prompts() -> list[Prompt]:
    """Real suite prompts, all distinct: every scenario under every framing and position."""
    rows = scenarios.load(REPO / "fixtures" / "scenarios.csv")
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    return [
        prompt_sets.build(s, Condition(f, p), prompt_set, names)
        for f in FRAMINGS
        for p in POSITIONS
        for s in rows
    ]


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable,
        str(REPO / "tests" / "fault_server.py"),
        f"--latency={latency}",
        "--lifetime=900",
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = json.loads(proc.stdout.readline())["port"]
    return proc, f"http://127.0.0.1:{port}/v1"


class Timing(NamedTuple):
    seconds: float
    errors: int
    cpu_s: float
    """CPU seconds the client spent (all its processes): shows whether it, not the server, is the limit."""


def timed(backend: APIBackend | CachedBackend, batch: list[Prompt]) -> Timing:
    """Wall seconds to answer the batch, items that came back as errors, and the client's CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    responses = backend.complete(batch, DECODING)
    errors = sum(r.error is not None for r in responses)
    return Timing(time.perf_counter() - start, errors, time.process_time() - cpu)


def one_process(url: str, concurrency: int, chunks: list[list[Prompt]]) -> dict[str, list[Timing]]:
    """Bare and cached runs interleaved on one backend (a second litellm Router in a process is slower)."""
    backend = APIBackend(MODEL, _options(url, concurrency))
    timed(backend, chunks[0][:concurrency])  # warm-up (not cached): lazy imports, connections
    out: dict[str, list[Timing]] = {"backend": [], "backend+cache": []}
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "responses.sqlite")
        cached = CachedBackend(backend, cache)
        for chunk in chunks:  # each chunk is new to the cache: every prompt is a miss, stored on arrival
            out["backend"].append(timed(backend, chunk))
            out["backend+cache"].append(timed(cached, chunk))
        cache.close()
    backend.close()
    return out


def _options(url: str, concurrency: int) -> BackendOptions:
    return BackendOptions(api_base=url, max_concurrency=concurrency, num_retries=0, request_timeout=60)


def _worker(url: str, concurrency: int, chunks: list[list[Prompt]], barrier: Any, queue: Any) -> None:
    """One of N processes: warm up, then each repeat starts with the others at a barrier."""
    backend = APIBackend(MODEL, _options(url, concurrency))
    timed(backend, chunks[0][:concurrency])
    for chunk in chunks:
        barrier.wait()
        start = time.time()
        timing = timed(backend, chunk)
        queue.put((start, start + timing.seconds, timing.errors, timing.cpu_s))
    backend.close()


def processes(url: str, concurrency: int, count: int, chunks: list[list[Prompt]]) -> list[Timing]:
    """Each repeat's chunk split over `count` processes: wall time from the first start to the last end."""
    context = multiprocessing.get_context("spawn")
    barrier, queue = context.Barrier(count), context.Queue()
    workers = [
        context.Process(
            target=_worker,
            args=(url, concurrency // count, [chunk[k::count] for chunk in chunks], barrier, queue),
        )
        for k in range(count)
    ]
    for worker in workers:
        worker.start()
    marks = [queue.get(timeout=600) for _ in range(count * len(chunks))]
    for worker in workers:
        worker.join(60)
    out = []
    for r in range(len(chunks)):
        round_marks = sorted(marks, key=lambda m: m[0])[r * count : (r + 1) * count]
        wall = max(m[1] for m in round_marks) - min(m[0] for m in round_marks)
        out.append(Timing(wall, sum(m[2] for m in round_marks), sum(m[3] for m in round_marks)))
    return out


def summarise(runs: list[Timing], prompts: int, ideal: float) -> dict[str, Any]:
    seconds = [r.seconds for r in runs]
    median = statistics.median(seconds)
    return {
        "seconds": [round(s, 3) for s in seconds],
        "median_s": round(median, 3),
        "best_s": round(min(seconds), 3),
        "median_ratio_to_ideal": round(median / ideal, 2),
        "prompts_per_s": round(prompts / median, 1),
        "errors": sum(r.errors for r in runs),
        "client_cpu_ms_per_prompt": round(1000 * statistics.median(r.cpu_s for r in runs) / prompts, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--processes", default="2", help="comma-separated process counts to try besides 1")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "benchmarks" / "api_concurrency.json")
    args = parser.parse_args()

    ideal = args.prompts / args.concurrency * args.latency
    everything = build_prompts()
    if len(everything) < args.prompts * args.repeats:
        raise SystemExit(
            f"{args.prompts * args.repeats} distinct prompts needed, {len(everything)} available"
        )
    # Distinct prompts in every repeat, so that each one is a cache miss in the `backend+cache` runs.
    chunks = [everything[i * args.prompts : (i + 1) * args.prompts] for i in range(args.repeats)]
    proc, url = start_server(args.latency)
    results: dict[str, dict[str, Any]] = {}
    try:
        for name, runs in one_process(url, args.concurrency, chunks).items():
            results[name] = summarise(runs, args.prompts, ideal)
        for count in (int(c) for c in args.processes.split(",") if c.strip()):
            runs = processes(url, args.concurrency, count, chunks)
            results[f"{count} processes"] = summarise(runs, args.prompts, ideal)
    finally:
        proc.terminate()
        proc.wait(10)

    report = {
        "benchmark": "api_concurrency",
        "command": "python benchmarks/api_concurrency.py " + " ".join(sys.argv[1:]),
        "prompts": args.prompts,
        "concurrency": args.concurrency,
        "server_latency_s": args.latency,
        "ideal_s": ideal,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "platform": platform.platform(),
        },
        "runs": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{args.prompts} prompts, concurrency {args.concurrency}, server latency {args.latency * 1000:.0f} ms: "
        f"ideal {ideal:.2f} s ({os.cpu_count()} CPUs)"
    )
    for name, run in results.items():
        print(
            f"  {name:<14} median {run['median_s']:.2f} s (best {run['best_s']:.2f} s) = "
            f"{run['median_ratio_to_ideal']:.2f} x ideal, {run['prompts_per_s']:.0f} prompts/s, "
            f"client CPU {run['client_cpu_ms_per_prompt']:.1f} ms/prompt, {run['errors']} errors"
        )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
