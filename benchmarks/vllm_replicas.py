"""Two real vLLM servers, each pinned to one core, fed by one run: ``python -m benchmarks.vllm_replicas``.

The measure of the pool (mathcomp_tests/backends/completions/pool.py) against the engine itself, on this
machine's cores 0 and 1:

- `offline`: vLLM's ``LLM.generate`` (benchmarks/vllm_offline.py) twice at once, one engine under
  ``taskset -c 0`` and one under ``taskset -c 1`` (``VLLM_CPU_OMP_THREADS_BIND`` the same core), each on
  half the prompts; both timed calls start together, after each engine's start and warm-up. Each
  engine's rate counts the tokenization of its texts (timed apart; a server does it within its time), as
  a script feeding ``LLM.generate`` texts would; the rate on ready token ids is kept too. The rates summed
  are the goal's denominator.
- `batched`: two vLLM OpenAI servers pinned the same way (server, engine and all its processes on its
  core), one --model-config group of both, and the suite's batched /v1/completions client with its
  ServerPool answering every prompt in one ``complete`` call; its share of the summed offline rate, its
  client CPU per prompt (this process, which no taskset binds), the prompts each server took, and how
  many answers equal the offline engines'.
- `vllm_client`: vLLM's own serving benchmark client (benchmarks/vllm_serve_client.py: what ``vllm bench
  serve`` runs, at request rate ``inf``, its ``--max-concurrency`` swept over ``--concurrency``) over the
  same two servers, one process feeding both, each server every other prompt; its rate, its client CPU
  per prompt and how many answers equal the pool's.
- `router`: the litellm Router path (``--api-batching=chat``) over the same two servers, on
  ``--router-prompts`` of them.

The three clients take turns (pool, vLLM's client, Router), ``--reps`` rounds; the median and best of
the rounds are kept. Goal: the pool at >= 0.95x of vLLM's client's best setting (by median).

The model is the one benchmarks/vllm_throughput.py uses (the demo model when vLLM's CPU attention serves
its head size, else a random Llama with head size 32). Prefix caching is off in every engine. Goal: the
batched pool at >= 0.9x of the summed offline rate. Writes reports/benchmarks/vllm_replicas.json.

    .venv/bin/python -m benchmarks.vllm_replicas [--vllm-python PATH] [--scale 2] [--router-prompts 1000]
        [--reps 2] [--concurrency 64,256,1024]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from benchmarks import multi_server, vllm_serve_client
from benchmarks.common import ROOT, load, machine, suite_env, write_json
from benchmarks.vllm_throughput import (
    DECODING,
    NO_PREFIX_CACHING,
    checked_python,
    matrix,
    model_dir,
    rated,
    timed,
    vllm_arguments,
)
from mathcomp_tests.backends.vllm import server as vllm_server
from mathcomp_tests.settings import BackendOptions

CORES = (0, 1)
GROUP = "replicas"
GOAL = 0.9
GOAL_VS_CLIENT = 0.95


def pinned_python(vllm_python: str, core: int, tmp: Path) -> Path:
    """A launcher that runs vLLM's Python on one core, with vLLM's OpenMP threads bound to it."""
    path = tmp / f"python-core-{core}"
    path.write_text(
        f'#!/bin/sh\nexport VLLM_CPU_OMP_THREADS_BIND={core}\nexec taskset -c {core} {vllm_python} "$@"\n'
    )
    path.chmod(0o755)
    return path


def offline_pair(
    launchers: list[Path], model: Path, texts: list[str], dtype: str, tmp: Path
) -> dict[str, Any]:
    """Both engines at once, each on its half of ``texts`` (every other prompt), timed over one window."""
    go = tmp / "go"
    go.unlink(missing_ok=True)
    env = vllm_server.server_env(BackendOptions(), suite_env())
    procs, outs = [], []
    for i, launcher in enumerate(launchers):
        given, out, ready = tmp / f"offline-{i}.json", tmp / f"offline-out-{i}.json", tmp / f"ready-{i}"
        ready.unlink(missing_ok=True)
        given.write_text(
            json.dumps({"prompts": texts[i :: len(launchers)], "max_tokens": DECODING.max_new_tokens})
        )
        command = [str(launcher), str(ROOT / "benchmarks" / "vllm_offline.py"), "--model", str(model)]
        command += ["--prompts", str(given), "--out", str(out), "--dtype", dtype, "--no-prefix-caching"]
        command += ["--ready", str(ready), "--go", str(go)]
        procs.append(
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
        outs.append((out, ready))
    vllm_serve_client.release_together(procs, [r for _, r in outs], go, "an offline engine failed to start")
    engines = []
    for proc, (out, _) in zip(procs, outs, strict=True):
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"an offline engine failed:\n{err[-3000:]}")
        engines.append(json.loads(out.read_text()))
    outputs: list[Any] = [None] * len(texts)
    for i, engine in enumerate(engines):
        outputs[i :: len(engines)] = engine.pop("outputs")
        rated(engine)
    return {
        "cores": [{"core": core, **engine} for core, engine in zip(CORES, engines, strict=True)],
        "summed_prompts_per_s": round(sum(e["prompts_per_s"] for e in engines), 1),
        "summed_with_tokenization_prompts_per_s": round(
            sum(e["with_tokenization_prompts_per_s"] for e in engines), 1
        ),
        "outputs": outputs,
    }


def cpu_by_role(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) of a server's processes by role: its front end (the OpenAI API
    server, which parses requests, tokenizes texts and writes replies), vLLM's engine core (the scheduler)
    and its worker (the model)."""
    import psutil

    roles = {"VLLM::EngineCore": "engine core", "VLLM::Worker": "worker"}
    spent: dict[str, float] = {"front end": 0.0, "engine core": 0.0, "worker": 0.0}
    for proc in psutil.Process(pid).children(recursive=True):
        try:
            times = proc.cpu_times()
            name = proc.name()
        except psutil.Error:
            continue
        role = next((r for prefix, r in roles.items() if name.startswith(prefix[:15])), None)
        if role is None and "python" in name.lower():
            role = "front end"
        if role is not None:
            spent[role] += times.user + times.system
    return spent


def _server_cpu(servers: list[Any]) -> list[dict[str, float]]:
    return [cpu_by_role(server.process.pid) for server in servers]


def _spent(servers: list[Any], before: list[dict[str, float]]) -> list[dict[str, float]]:
    """CPU seconds each server's roles spent since ``before``."""
    return [
        {role: round(now.get(role, 0.0) - was.get(role, 0.0), 2) for role in was}
        for now, was in zip(_server_cpu(servers), before, strict=True)
    ]


def servers_run(
    launchers: list[Path], model: Path, prompts: list[Any], texts: list[str], args: argparse.Namespace, tmp: Path
) -> tuple[dict[str, Any], list[str]]:
    """Both servers up (each on its core), then ``args.reps`` rounds of the three clients in turn: our
    batched pool, vLLM's own benchmark client (its concurrency swept), the litellm Router."""
    from mathcomp_tests.backends import create, models

    options = BackendOptions(vllm_dtype=args.vllm_dtype, vllm_args=NO_PREFIX_CACHING)
    result: dict[str, Any] = {"batched_runs": [], "vllm_client_runs": [], "router_runs": []}
    answers: dict[str, list[str]] = {}
    with ExitStack() as stack:
        started = time.perf_counter()
        servers = []
        for launcher in launchers:  # one at a time: two starts at once on two cores starve each other
            server = vllm_server.start(str(launcher), str(model), options, tmp / "logs")
            stack.callback(server.stop)
            servers.append(server)
        result["servers_start_s"] = round(time.perf_counter() - started, 1)
        urls = [s.api_base for s in servers]
        path = multi_server.config(urls, tmp / "replicas.json", str(model), GROUP)
        spec = models.resolve(GROUP, config=path)
        batched: Any = create(spec, BackendOptions(model_config=path, api_batching="completions"))
        stack.callback(batched.close)
        router: Any = create(spec, BackendOptions(model_config=path, api_batching="chat"))
        stack.callback(router.close)
        batched.complete(prompts[:16], DECODING)  # warm-up, as offline had
        router.complete(prompts[:16], DECODING)
        concurrency = [int(c) for c in args.concurrency.split(",")]
        for rep in range(args.reps):
            for member in batched.pool.members:
                member.prompts = 0
            before = _server_cpu(servers)
            run = timed(batched, [prompts])
            answers["batched"] = run.pop("texts")
            run.update(server_cpu_s=_spent(servers, before), per_server=[m.prompts for m in batched.pool.members])
            result["batched_runs"].append(run)
            print(f"   batched: {run}", flush=True)
            passes = []
            for processes in [int(n) for n in args.client_processes.split(",")]:
                before = _server_cpu(servers)
                name = f"client-{rep}-{processes}"
                setting = vllm_serve_client.run(
                    args.vllm_python, urls, model, texts, DECODING, concurrency, tmp, name, suite_env(), processes
                )
                setting[-1]["server_cpu_s_all_passes"] = _spent(servers, before)
                passes += setting
            for one in passes:
                answers[f"vllm_client_{_key(one)}"] = one.pop("texts")
            result["vllm_client_runs"].append(passes)
            print(f"   vLLM's client: {[(_key(p), p['prompts_per_s']) for p in passes]}", flush=True)
            run = timed(router, [prompts[: args.router_prompts]])
            answers["router"] = run.pop("texts")
            result["router_runs"].append(run)
            print(f"   router: {run}", flush=True)
    result["vllm_client_answers_agree_with_batched"] = {
        name.removeprefix("vllm_client_"): round(
            sum(a.strip() == b.strip() for a, b in zip(said, answers["batched"], strict=True)) / len(said), 4
        )
        for name, said in answers.items()
        if name.startswith("vllm_client_")
    }
    return result, answers["batched"]


def _key(got: Mapping[str, Any]) -> str:
    """A setting of vLLM's client: its processes and its requests in flight per server."""
    return f"{got['processes']}p-{got['concurrency']}"


def summarise(result: dict[str, Any]) -> None:
    """Best and median of the alternated rounds for each client; our pool against vLLM's client's best."""
    for name in ("batched", "router"):
        runs = result[f"{name}_runs"]
        rates = sorted(r["prompts_per_s"] for r in runs)
        best = max(runs, key=lambda r: r["prompts_per_s"])
        result[name] = {
            **best,
            "rates": rates,
            "median_prompts_per_s": statistics.median(rates),
            "median_client_cpu_ms_per_prompt": statistics.median(r["client_cpu_ms_per_prompt"] for r in runs),
        }
    by_setting: dict[str, list[dict[str, Any]]] = {}
    for passes in result["vllm_client_runs"]:
        for got in passes:
            by_setting.setdefault(_key(got), []).append(got)
    sweep = {
        c: {
            "rates": sorted(g["prompts_per_s"] for g in runs),
            "median_prompts_per_s": statistics.median(g["prompts_per_s"] for g in runs),
            "best_prompts_per_s": max(g["prompts_per_s"] for g in runs),
            "client_cpu_ms_per_prompt": statistics.median(g["client_cpu_ms_per_prompt"] for g in runs),
            "errors": sum(g["errors"] for g in runs),
        }
        for c, runs in by_setting.items()
    }
    best = max(sweep, key=lambda c: sweep[c]["median_prompts_per_s"])
    result["vllm_client"] = {"sweep": sweep, "best_setting": best, **sweep[best]}
    ours, theirs = result["batched"], result["vllm_client"]
    result["pool_vs_vllm_client"] = {
        "median": round(ours["median_prompts_per_s"] / theirs["median_prompts_per_s"], 3),
        "best": round(ours["prompts_per_s"] / max(s["best_prompts_per_s"] for s in sweep.values()), 3),
    }
    result["goal_0_95_met"] = result["pool_vs_vllm_client"]["median"] >= GOAL_VS_CLIENT


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    vllm_arguments(parser)
    parser.add_argument("--scale", type=int, default=2, help="identities in the matrix (1: 4,200 prompts)")
    parser.add_argument("--router-prompts", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=2, help="alternated rounds of the three clients")
    parser.add_argument(
        "--concurrency", default="64,256,1024", help="vLLM's client: requests in flight per server, swept"
    )
    parser.add_argument(
        "--client-processes", default="1,2", help="vLLM's client: 1 (one process feeds both servers), 2 (one each)"
    )
    args = parser.parse_args()
    checked_python(args)
    if len(os.sched_getaffinity(0)) < len(CORES):
        raise SystemExit(f"needs cores {CORES}; this process may run on {sorted(os.sched_getaffinity(0))}")
    result: dict[str, Any] = {"machine": machine(), "load_before": load(), "cores": list(CORES)}
    with tempfile.TemporaryDirectory(prefix="vllm-replicas-") as name:
        tmp = Path(name)
        model = model_dir(argparse.Namespace(model=args.model, qwen_3b=False), tmp)
        from transformers import AutoTokenizer

        from mathcomp_tests.backends.local import tokens

        tokenizer = AutoTokenizer.from_pretrained(model)
        prompts = matrix(args.scale)
        texts = [tokens.render(tokenizer, p, True) for p in prompts]
        result.update(model=str(model), prompts=len(prompts))
        launchers = [pinned_python(args.vllm_python, core, tmp) for core in CORES]
        print(f"== offline LLM.generate, one engine per core, {len(texts):,} prompts", flush=True)
        result["offline"] = offline_pair(launchers, model, texts, args.vllm_dtype, tmp)
        offline_texts = [
            tokenizer.decode(ids, skip_special_tokens=True) for ids in result["offline"].pop("outputs")
        ]
        print(f"   {result['offline']}", flush=True)
        print("== two servers, one per core: the pool, vLLM's client, the Router, in turns", flush=True)
        served, texts_got = servers_run(launchers, model, prompts, texts, args, tmp)
        result.update(served)
    summarise(result)
    result["batched"]["agree_with_offline"] = round(
        sum(a == b for a, b in zip(texts_got, offline_texts, strict=True)) / len(prompts), 4
    )
    summed = result["offline"]["summed_prompts_per_s"]
    tokenized = result["offline"]["summed_with_tokenization_prompts_per_s"]
    for name in ("batched", "router"):
        rate = result[name]["median_prompts_per_s"]  # of the alternated rounds
        result[name]["share_of_offline"] = round(rate / summed, 3)
        result[name]["share_of_offline_with_tokenization"] = round(rate / tokenized, 3)
    result["goal_0_9_met"] = result["batched"]["share_of_offline_with_tokenization"] >= GOAL
    result["load_after"] = load()
    path = write_json("vllm_replicas", result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    for row in table_rows(result):
        print(" | ".join(row))
    print(f"written: {path.relative_to(ROOT)}")


def table_rows(r: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The benchmark table's row (benchmarks/table.py)."""
    off, b, c = r["offline"], r["batched"], r["router"]
    per_core = " + ".join(f"{e['with_tokenization_prompts_per_s']:.0f}" for e in off["cores"])
    cells = (
        f"offline, one engine per core, its tokenization timed: {per_core} = "
        f"{off['summed_with_tokenization_prompts_per_s']:.0f} prompts/s "
        f"({off['summed_prompts_per_s']:.0f} on token ids); batched pool {b['median_prompts_per_s']:.0f} prompts/s "
        f"(median of {len(b['rates'])}: {' and '.join(f'{x:.0f}' for x in b['rates'])}) = "
        f"{b['share_of_offline_with_tokenization']:.2f}x ({b['share_of_offline']:.2f}x of token ids), "
        f"{b['median_client_cpu_ms_per_prompt']:.3f} ms client CPU/prompt, servers took {b['per_server']}, "
        f"{100 * b['agree_with_offline']:.1f}% the same as offline; Router {c['median_prompts_per_s']:.0f} prompts/s = "
        f"{c['share_of_offline_with_tokenization']:.2f}x ({c['prompts']:,} prompts); goal 0.9x "
        + ("met" if r["goal_0_9_met"] else "not met")
    )
    load_note = f" (load {r['load_before'][0]} → {r['load_after'][0]})" if r.get("load_before") else ""
    rows = [
        (
            f"two vLLM CPU servers pinned to cores {r['cores']}, {r['prompts']:,} one-word prompts, "
            f"8 new tokens: the batched --model-config pool vs one offline engine per core{load_note}",
            "`python -m benchmarks.vllm_replicas`",
            cells,
        )
    ]
    if "vllm_client" in r:
        rows.append(client_row(r, load_note))
    return rows


def _setting(key: str) -> str:
    processes, concurrency = key.split("-")
    return f"{processes.removesuffix('p')} proc. x {concurrency}"


def client_row(r: Mapping[str, Any], load_note: str) -> tuple[str, str, str]:
    """Our pool, vLLM's own benchmark client and the Router on the same two servers, alternated."""
    b, v, c, ratio = r["batched"], r["vllm_client"], r["router"], r["pool_vs_vllm_client"]
    sweep = ", ".join(f"{_setting(k)}: {s['median_prompts_per_s']:.0f}" for k, s in v["sweep"].items())
    agree = r["vllm_client_answers_agree_with_batched"][v["best_setting"]]
    cells = (
        f"prompts/s, median of {len(r['batched_runs'])} alternated rounds: our pool {b['median_prompts_per_s']:.0f} "
        f"({b['median_client_cpu_ms_per_prompt']:.3f} ms client CPU/prompt); vLLM's client by processes and requests "
        f"in flight per server ({sweep}), best {v['median_prompts_per_s']:.0f} at {_setting(v['best_setting'])} "
        f"({v['client_cpu_ms_per_prompt']:.3f} ms client CPU/prompt, {100 * agree:.1f}% the same answers); "
        f"Router {c['median_prompts_per_s']:.0f} ({c['prompts']:,} prompts); pool / vLLM's client "
        f"{ratio['median']:.2f}x (best rounds {ratio['best']:.2f}x); goal 0.95x "
        + ("met" if r["goal_0_95_met"] else "not met")
    )
    return (
        f"the same two pinned servers and prompts: our pool vs vLLM's own serving benchmark client "
        f"(request rate inf) vs the litellm Router{load_note}",
        "`python -m benchmarks.vllm_replicas`",
        cells,
    )


if __name__ == "__main__":
    main()
