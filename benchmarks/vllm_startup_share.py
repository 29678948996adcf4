"""The suite end to end against the offline engine on the default matrix, several times in turn:
``python -m benchmarks.vllm_startup_share``.

One run of each gave 0.98x and 0.68x on the same code: the machine's spread is larger than one pair can
show. This alternates ``--runs`` pairs on the default matrix (4,200 one-word prompts, 8 new tokens,
greedy; prefix caching off):

- `offline`: vLLM's ``LLM.generate`` on the rendered prompts (benchmarks/vllm_offline.py, a fresh engine
  each run, its start not timed; its tokenization timed apart, as a server does it within its time);
- `suite`: pytest end to end (start-up, the cases, summary and report) against one vLLM server started
  once for every run, each run with a fresh response cache (benchmarks/vllm_throughput.suite).

The server stays up, idle, while an offline engine runs; what it spent then is kept (``server_idle_cpu_s``)
to show it took nothing from the engine. Each pair's share (suite over offline) and the median and
spread (min, max) of the rates and shares are written to reports/benchmarks/vllm_startup_share.json.

    .venv/bin/python -m benchmarks.vllm_startup_share [--vllm-python PATH] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, load, machine, write_json
from benchmarks.vllm_replicas import cpu_by_role
from benchmarks.vllm_throughput import (
    NO_PREFIX_CACHING,
    checked_python,
    matrix,
    model_dir,
    offline,
    rated,
    suite,
    vllm_arguments,
)
from mathcomp_tests.backends.vllm.engine import serve
from mathcomp_tests.settings import BackendOptions


def spread(values: list[float]) -> dict[str, float]:
    """Median, min and max of ``values``."""
    return {"median": round(statistics.median(values), 3), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    vllm_arguments(parser)
    parser.add_argument("--runs", type=int, default=5, help="pairs of runs, offline then the suite")
    args = parser.parse_args()
    checked_python(args)
    result: dict[str, Any] = {"machine": machine(), "load_before": load(), "pairs": []}
    with tempfile.TemporaryDirectory(prefix="vllm-share-") as name:
        tmp = Path(name)
        model = model_dir(argparse.Namespace(model=args.model, qwen_3b=False), tmp)
        from transformers import AutoTokenizer

        from mathcomp_tests.backends.local import tokens

        tokenizer = AutoTokenizer.from_pretrained(model)
        texts = [tokens.render(tokenizer, p, True) for p in matrix(1)]
        result.update(model=str(model), prompts=len(texts))
        options = BackendOptions(
            vllm_python=args.vllm_python, vllm_dtype=args.vllm_dtype, vllm_args=NO_PREFIX_CACHING
        )
        started = time.perf_counter()
        server = serve(str(model), options, tmp)
        result["server_start_s"] = round(time.perf_counter() - started, 1)
        try:
            for run in range(args.runs):
                before = sum(cpu_by_role(server.process.pid).values())
                engine = offline(args.vllm_python, model, texts, args.vllm_dtype, tmp)
                idle = round(sum(cpu_by_role(server.process.pid).values()) - before, 2)
                engine.pop("outputs")
                rated(engine)
                folder = tmp / f"run-{run}"
                folder.mkdir()
                ours = suite(model, server.api_base, args.vllm_dtype, 1, folder)
                pair = {
                    "offline": engine,
                    "server_idle_cpu_s": idle,
                    "suite": ours,
                    "share": round(ours["prompts_per_s"] / engine["prompts_per_s"], 3),
                    "share_with_tokenization": round(
                        ours["prompts_per_s"] / engine["with_tokenization_prompts_per_s"], 3
                    ),
                }
                result["pairs"].append(pair)
                print(
                    f"   run {run + 1}: offline {engine['prompts_per_s']} prompts/s, suite "
                    f"{ours['prompts_per_s']} prompts/s = {pair['share']}x",
                    flush=True,
                )
        finally:
            server.stop()
    summarise(result)
    result["load_after"] = load()
    path = write_json("vllm_startup_share", result)
    print(json.dumps({k: v for k, v in result.items() if k not in ("machine", "pairs")}, indent=2))
    for row in table_rows(result):
        print(" | ".join(row))
    print(f"written: {path.relative_to(ROOT)}")


def summarise(result: dict[str, Any]) -> None:
    """The median and spread of each rate and share over the pairs."""
    pairs = result["pairs"]
    result["offline"] = spread([p["offline"]["prompts_per_s"] for p in pairs])
    result["offline_with_tokenization"] = spread(
        [p["offline"]["with_tokenization_prompts_per_s"] for p in pairs]
    )
    result["suite"] = spread([p["suite"]["prompts_per_s"] for p in pairs])
    result["share"] = spread([p["share"] for p in pairs])
    result["share_with_tokenization"] = spread([p["share_with_tokenization"] for p in pairs])
    before = [p["suite"].get("phases_s", {}).get("before the first prompt") for p in pairs]
    if all(isinstance(b, (int, float)) for b in before):
        result["suite_before_first_prompt_s"] = spread([float(b) for b in before if b is not None])


def table_rows(r: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The benchmark table's row (benchmarks/table.py)."""
    off, ours, share, tok = r["offline"], r["suite"], r["share"], r["share_with_tokenization"]
    load_note = f" (load {r['load_before'][0]} → {r['load_after'][0]})" if r.get("load_before") else ""

    def cell(s: Mapping[str, float], unit: str = "") -> str:
        return f"{s['median']:g}{unit} ({s['min']:g} to {s['max']:g})"

    return [
        (
            f"vLLM CPU server, the default matrix ({r['prompts']:,} prompts), {len(r['pairs'])} alternated runs: "
            f"pytest end to end vs the offline engine, median (min to max){load_note}",
            "`python -m benchmarks.vllm_startup_share`",
            f"offline {cell(off)} prompts/s; suite {cell(ours)} prompts/s; share {cell(share, 'x')}, "
            f"{cell(tok, 'x')} of offline with its tokenization timed"
            + (
                f"; the suite's seconds before its first prompt {cell(r['suite_before_first_prompt_s'], ' s')}"
                if "suite_before_first_prompt_s" in r
                else ""
            ),
        )
    ]


if __name__ == "__main__":
    main()
