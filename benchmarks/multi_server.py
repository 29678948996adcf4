"""Several servers on the batched /v1/completions path: ``python -m benchmarks.multi_server``.

Instant fake servers (tests/helpers/fault_server.py run as a script, each a process of its own, latency
``--latency``, listing the demo model's tokenizer as its `root`), 1, 2 and 4 of them behind one
--model-config group: the default matrix (4,200 one-word prompts) through our batched client and its
ServerPool in one ``complete`` call, with the client's own CPU (this process's time) per prompt and its
prompts/s; and the litellm Router path (--api-batching=chat, one chat request per prompt, 16 in flight)
over the same servers and the same config, on ``--router-prompts`` of them.

Two real vLLM servers, each pinned to one core, against the engine offline on one core each:
benchmarks/vllm_replicas.py. Prints the numbers with the machine's load and writes
reports/benchmarks/multi_server.json.

    .venv/bin/python -m benchmarks.multi_server [--servers 1,2,4] [--latency 0] [--router-prompts 1000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, load, machine, suite_env, write_json

SCRIPT = ROOT / "tests" / "helpers" / "fault_server.py"
DEMO = ROOT / "fixtures" / "models" / "mathcomp-tiny"
GROUP = "bench"


@contextmanager
def fake_server(latency: float) -> Iterator[str]:
    """One fault server process, never failing; its API base while the block runs."""
    command = [sys.executable, str(SCRIPT), "--latency", str(latency), "--lifetime", "1800"]
    proc = subprocess.Popen(
        [*command, "--model-root", str(DEMO)], stdout=subprocess.PIPE, text=True, env=suite_env()
    )
    try:
        assert proc.stdout is not None
        port = json.loads(proc.stdout.readline())["port"]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(30)


def config(urls: list[str], path: Path, served: str = str(DEMO), group: str = GROUP) -> Path:
    """The --model-config group ``group``: one OpenAI-compatible deployment of ``served`` per server."""
    deployments = [
        {"model_name": group, "litellm_params": {"model": f"openai/{served}", "api_base": url}}
        for url in urls
    ]
    path.write_text(json.dumps({"model_list": deployments}))
    return path


def timed(backend: Any, prompts: list[Any]) -> dict[str, Any]:
    from mathcomp_tests.types import Decoding

    wall, cpu = time.perf_counter(), time.process_time()
    responses = backend.complete(prompts, Decoding(max_new_tokens=8))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "prompts": len(prompts),
        "seconds": round(wall, 3),
        "prompts_per_s": round(len(prompts) / wall, 1),
        "client_cpu_ms_per_prompt": round(1000 * cpu / len(prompts), 4),
        "errors": sum(r.error is not None for r in responses),
    }


def measure(n: int, latency: float, router_prompts: int, prompts: list[Any], tmp: Path) -> dict[str, Any]:
    """The batched path and the Router path over ``n`` fresh servers."""
    from mathcomp_tests.backends import create, models
    from mathcomp_tests.settings import BackendOptions

    with ExitStack() as stack:
        urls = [stack.enter_context(fake_server(latency)) for _ in range(n)]
        path = config(urls, tmp / f"servers-{n}.json")
        spec = models.resolve(GROUP, config=path)
        batched = create(spec, BackendOptions(model_config=path, api_batching="completions"))
        batched.complete(prompts[:16], _decoding())  # warm-up: connections, tokenizer
        pool = getattr(batched, "pool", None)
        for member in pool.members if pool else ():
            member.prompts = 0
        got = {"batched": timed(batched, prompts)}
        got["batched"]["per_server"] = [m.prompts for m in pool.members] if pool else [len(prompts)]
        batched.close()
        router = create(spec, BackendOptions(model_config=path, api_batching="chat"))
        router.complete(prompts[:16], _decoding())
        got["router"] = timed(router, prompts[:router_prompts])
        router.close()
    print(f"   {n} server(s): {got}", flush=True)
    return got


def _decoding() -> Any:
    from mathcomp_tests.types import Decoding

    return Decoding(max_new_tokens=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="1,2,4", help="how many fake servers, comma-separated")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each request waits")
    parser.add_argument("--router-prompts", type=int, default=1000)
    args = parser.parse_args()
    from benchmarks.vllm_throughput import matrix

    prompts = matrix(1)
    result: dict[str, Any] = {
        "machine": machine(),
        "load_before": load(),
        "latency_s": args.latency,
        "prompts": len(prompts),
        "servers": {},
    }
    with tempfile.TemporaryDirectory(prefix="multi-server-") as name:
        for n in (int(s) for s in args.servers.split(",") if s):
            print(f"== {n} fake server(s), {len(prompts):,} prompts", flush=True)
            result["servers"][str(n)] = measure(n, args.latency, args.router_prompts, prompts, Path(name))
    result["load_after"] = load()
    path = write_json("multi_server", result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    for row in table_rows(result):
        print(" | ".join(row))
    print(f"written: {path.relative_to(ROOT)}")


def table_rows(r: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The benchmark table's row (benchmarks/table.py)."""
    cells = []
    for n, entry in r["servers"].items():
        b, c = entry["batched"], entry["router"]
        cells.append(
            f"{n} server(s): batched {b['prompts_per_s']:.0f} prompts/s, {b['client_cpu_ms_per_prompt']:.3f} ms "
            f"CPU/prompt; Router {c['prompts_per_s']:.0f} prompts/s, {c['client_cpu_ms_per_prompt']:.2f} ms"
        )
    load_note = f" (load {r['load_before'][0]} → {r['load_after'][0]})" if r.get("load_before") else ""
    return [
        (
            f"several servers, {r['prompts']:,} one-word prompts, instant fake servers "
            f"({1000 * r['latency_s']:.0f} ms): batched --model-config pool vs the Router{load_note}",
            "`python -m benchmarks.multi_server`",
            "; ".join(cells),
        )
    ]


if __name__ == "__main__":
    main()
