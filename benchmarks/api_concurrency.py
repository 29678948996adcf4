"""API fan-out against a local OpenAI-compatible server with a fixed latency: ``python -m benchmarks.api_concurrency``.

1,000 prompts against a server that answers each in 100 ms (tests/helpers/fault_server.py, in its own process
so that it does not compete with the client for the interpreter), at concurrency 1, 16 and 100; the
ideal is latency x prompts / concurrency. At concurrency 1 the ideal is 100 s, so ``--serial-prompts``
(200) are sent and the time is scaled to 1,000 (the per-request cost is constant at concurrency 1).
Side by side on the same server, one process each:

- `router`: our path, APIBackend (a litellm Router with retries, fan-out under a semaphore);
- `litellm.acompletion`: plain litellm calls under the same semaphore, no Router;
- `openai.AsyncOpenAI`: the openai package alone, with its own retries (max_retries=2);
- `router+cache`: our path through the sqlite cache, each response stored as it arrives (a real run);
- `2 processes`: the prompts split over 2 processes of APIBackend, half the concurrency each;
- `pytest -n 0` / `pytest -n 2`: the suite itself under pytest (4 cases x 250 scenarios = 1,000 prompts,
  `--no-cache`), start-up and report included, with --max-concurrency = concurrency / workers; also
  its peak memory (the whole process tree).

Prints the numbers and writes reports/benchmarks/api_concurrency.json.

    .venv/bin/python -m benchmarks.api_concurrency [--prompts 1000] [--concurrency 1,16,100] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.common import checked, load, pytest_command, run_tracked  # noqa: E402
from mathcomp_tests import prompts as prompt_sets  # noqa: E402
from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache  # noqa: E402
from mathcomp_tests.backends.chat.api import APIBackend  # noqa: E402
from mathcomp_tests.data import scenarios  # noqa: E402
from mathcomp_tests.settings import BackendOptions  # noqa: E402
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
        str(REPO / "tests" / "helpers" / "fault_server.py"),
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


def raw_clients(url: str) -> dict[str, Callable[[Prompt], Awaitable[Any]]]:
    """One request each way, without our backend: plain litellm, and the openai package with its retries."""
    import litellm
    from openai import AsyncOpenAI

    litellm.suppress_debug_info = True
    client = AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=2, timeout=60)

    def messages(prompt: Prompt) -> list[dict[str, str]]:
        return [{"role": m.role, "content": m.content} for m in prompt.messages]

    async def via_litellm(prompt: Prompt) -> Any:
        return await litellm.acompletion(
            model=MODEL,
            api_base=url,
            api_key="not-needed",
            messages=messages(prompt),
            max_tokens=8,
            temperature=0,
        )

    async def via_openai(prompt: Prompt) -> Any:
        return await client.chat.completions.create(
            model="benchmark",
            messages=messages(prompt),  # type: ignore[arg-type]
            max_tokens=8,
            temperature=0,
        )

    return {"litellm.acompletion": via_litellm, "openai.AsyncOpenAI": via_openai}


async def _fan_out(send: Callable[[Prompt], Awaitable[Any]], batch: list[Prompt], concurrency: int) -> int:
    """Every prompt sent under a semaphore of ``concurrency``; returns how many raised."""
    gate = asyncio.Semaphore(concurrency)

    async def one(prompt: Prompt) -> bool:
        async with gate:
            try:
                await send(prompt)
                return False
            except Exception:
                return True

    return sum(await asyncio.gather(*(one(p) for p in batch)))


def one_client(
    kind: str, url: str, levels: dict[int, list[list[Prompt]]], queue: Any = None
) -> dict[str, dict[int, list[Timing]]]:
    """One way of sending (``router``, or a name from raw_clients) at every concurrency level, in a process
    of its own (litellm binds its logging worker to the first event loop it sees); ``router`` also goes
    through the cache at the highest level, every prompt new to the cache."""
    out: dict[str, dict[int, list[Timing]]] = {}
    top = max(levels)
    if kind == "router":
        backends = {c: APIBackend(MODEL, _options(url, c)) for c in levels}
        for concurrency, chunks in levels.items():
            timed(backends[concurrency], chunks[0][: max(concurrency, 8)])  # warm-up: imports, connections
            out[kind] = out.get(kind, {})
            out[kind][concurrency] = [timed(backends[concurrency], chunk) for chunk in chunks]
        with tempfile.TemporaryDirectory() as tmp:
            cache = ResponseCache(Path(tmp) / "responses.sqlite")
            cached = CachedBackend(backends[top], cache)
            out["router+cache"] = {top: [timed(cached, chunk) for chunk in levels[top]]}
            cache.close()
        for backend in backends.values():
            backend.close()
    else:
        send = raw_clients(url)[kind]
        loop = asyncio.new_event_loop()
        for concurrency, chunks in levels.items():
            loop.run_until_complete(_fan_out(send, chunks[0][: max(concurrency, 8)], concurrency))
            for chunk in chunks:
                start, cpu = time.perf_counter(), time.process_time()
                errors = loop.run_until_complete(_fan_out(send, chunk, concurrency))
                timing = Timing(time.perf_counter() - start, errors, time.process_time() - cpu)
                out.setdefault(kind, {}).setdefault(concurrency, []).append(timing)
        loop.close()
    if queue is not None:
        queue.put(out)
    return out


def in_process(
    kind: str, url: str, levels: dict[int, list[list[Prompt]]]
) -> dict[str, dict[int, list[Timing]]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    worker = context.Process(target=one_client, args=(kind, url, levels, queue))
    worker.start()
    out: dict[str, dict[int, list[Timing]]] = queue.get(timeout=1200)
    worker.join(60)
    return {name: {c: [Timing(*t) for t in runs] for c, runs in per.items()} for name, per in out.items()}


def suite_runs(url: str, concurrency: int, workers: tuple[int, ...], quick: bool) -> dict[str, Any]:
    """The suite under pytest on 1,000 prompts (4 cases x 250), --no-cache, with and without xdist."""
    out: dict[str, Any] = {}
    limit = 50 if quick else 250
    for n in workers:
        with tempfile.TemporaryDirectory(prefix="mathcomp-api-") as tmp:
            args = [
                f"--model={MODEL}",
                f"--api-base={url}",
                "--framings=neutral,direct-more",
                "-k",
                "test_framing",
                f"--limit={limit}",
                f"--max-concurrency={max(1, concurrency // max(1, n))}",
                "--num-retries=0",
                "--no-cache",
                f"--reports-dir={tmp}/reports",
                f"--cache-dir={tmp}/cache",
                f"--thresholds={_permissive(Path(tmp))}",
                "-n",
                str(n),
            ]
            result = checked(run_tracked(pytest_command(*args), timeout=900), "pytest " + " ".join(args))
            out[f"pytest -n {n}"] = {
                "seconds": result.seconds,
                "prompts": 4 * limit,
                "peak_rss_mib": result.peak_rss_mib,
                "pytest_says": result.last_line(),
                "load_after": load(),
            }
    return out


def _permissive(folder: Path) -> Path:
    """Ceilings nothing breaches: the server answers the same word to everything."""
    path = folder / "thresholds.toml"
    path.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.02\n")
    return path


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
    parser.add_argument("--serial-prompts", type=int, default=200, help="sent at concurrency 1, then scaled")
    parser.add_argument("--concurrency", default="1,16,100", help="comma-separated levels")
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per level above 1 (1 at level 1)")
    parser.add_argument("--processes", default="2", help="comma-separated process counts to try besides 1")
    parser.add_argument("--quick", action="store_true", help="200 prompts, 40 at concurrency 1, one repeat")
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "benchmarks" / "api_concurrency.json")
    args = parser.parse_args()
    if args.quick:
        args.prompts, args.serial_prompts, args.repeats = 200, 40, 1
    levels = sorted(int(c) for c in args.concurrency.split(",") if c.strip())
    top = max(levels)
    everything = build_prompts()
    # Distinct prompts in every repeat, so that each one is a cache miss in the `router+cache` runs.
    chunks = [everything[i * args.prompts : (i + 1) * args.prompts] for i in range(args.repeats)]
    by_level = {c: ([chunks[0][: args.serial_prompts]] if c == 1 else chunks) for c in levels}
    before = load()
    proc, url = start_server(args.latency)
    results: dict[str, dict[str, Any]] = {}
    try:
        measured: dict[str, dict[int, list[Timing]]] = {}
        for kind in ("router", "litellm.acompletion", "openai.AsyncOpenAI"):
            measured.update(in_process(kind, url, by_level))
        for name, per_level in measured.items():
            for c, runs in per_level.items():
                sent = len(by_level[c][0])
                scale = args.prompts / sent
                ideal = args.prompts / c * args.latency
                scaled = [Timing(r.seconds * scale, r.errors, r.cpu_s * scale) for r in runs]
                entry = summarise(scaled, args.prompts, ideal)
                entry["sent"] = sent
                results.setdefault(name, {})[str(c)] = entry
        for count in (int(c) for c in args.processes.split(",") if c.strip()):
            runs = processes(url, top, count, chunks)
            results.setdefault(f"{count} processes", {})[str(top)] = summarise(
                runs, args.prompts, args.prompts / top * args.latency
            )
        suite = suite_runs(url, top, (0, 2), args.quick)
    finally:
        proc.terminate()
        proc.wait(10)

    report = {
        "benchmark": "api_concurrency",
        "command": "python -m benchmarks.api_concurrency " + " ".join(sys.argv[1:]),
        "prompts": args.prompts,
        "concurrency": levels,
        "server_latency_s": args.latency,
        "ideal_s": {str(c): args.prompts / c * args.latency for c in levels},
        "runs": results,
        "suite": suite,
        "suite_concurrency": top,
        "load_before": before,
        "load_after": load(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{args.prompts} prompts, server latency {args.latency * 1000:.0f} ms ({os.cpu_count()} CPUs)")
    for name, summaries in results.items():
        for level, run in summaries.items():
            print(
                f"  {name:<20} c={level:>3}: {run['median_s']:.2f} s = {run['median_ratio_to_ideal']:.2f}x ideal, "
                f"{run['prompts_per_s']:.0f} prompts/s, client CPU {run['client_cpu_ms_per_prompt']:.1f} ms/prompt, "
                f"{run['errors']} errors"
            )
    for name, run in suite.items():
        print(
            f"  {name:<20} c={top}: {run['seconds']:.2f} s for {run['prompts']} prompts, peak {run['peak_rss_mib']} MiB"
        )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
