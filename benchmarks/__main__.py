"""Every benchmark in one run: ``python -m benchmarks [--quick] [--only NAME,...]`` (``make bench``).

Runs each benchmark script in its own process, one after the other, with the load average before and
after each; collects what each wrote under reports/benchmarks/ into reports/benchmarks/<YYYY-MM-DD>.json
with the machine (CPU, cores, memory, GPU, versions), and writes the table to
reports/benchmarks/README.md and between the markers of docs/benchmarks.md.
``--quick`` (a few minutes) writes <YYYY-MM-DD>-quick.json and quick.md and leaves docs/benchmarks.md alone.
A benchmark that fails is recorded as failed; the others still run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from benchmarks import table
from benchmarks.common import OUT_DIR, ROOT, load, machine, suite_env


@dataclass(frozen=True)
class Step:
    name: str
    output: str
    """What the benchmark writes under reports/benchmarks/."""
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    full_only: bool = False
    """Left out of ``--quick`` (it trains models: over an hour on 2 busy cores)."""


def gpu_step() -> Step:
    """The Qwen2.5-3B-sized run where a CUDA GPU is present, else the tiny CPU check of its code path."""
    from benchmarks.common import gpu

    if gpu():
        return Step("gpu_qwen", "gpu_qwen-cuda.json", quick=("--limit=20",))
    tiny = ("--tiny", "--device=cpu", "--limit=2")
    return Step("gpu_qwen", "gpu_qwen-tiny-cpu.json", tiny, tiny)


STEPS = (
    Step("harness_overhead", "harness_overhead.json", ("--repeat", "1"), ("--repeat", "1", "--ours-only")),
    Step(
        "hf_throughput",
        "hf_throughput-cpu.json",
        ("--device=cpu", "--limit=100", "--single=100", "--loglikelihood=700"),
        ("--device=cpu", "--limit=20", "--single=20", "--loglikelihood=60"),
    ),
    Step("api_concurrency", "api_concurrency.json", (), ("--quick",)),
    Step("xdist_memory", "xdist_memory.json", ("--hf-limit=100",), ("--quick",)),
    Step("plugin_startup", "plugin_startup.json", ("--runs", "5"), ("--runs", "2")),
    Step("vllm_throughput", "vllm_throughput.json", (), ("--scales=1", "--router-prompts=500")),
    Step("reader_speed", "reader_speed.json", (), ("--sizes=2000,64000", "--repeat=1")),
    Step("multi_server", "multi_server.json", (), ("--servers=1,2", "--router-prompts=300")),
    Step(
        "vllm_replicas",
        "vllm_replicas.json",
        (),
        ("--scale=1", "--router-prompts=300", "--concurrency=64,256", "--reps=2"),
    ),
    Step("vllm_startup_share", "vllm_startup_share.json", ("--runs=5",), ("--runs=2",)),
    Step("batch_api", "batch_api.json", ("--limit=20",), ("--limit=4", "--batch-delay=2")),
    Step("interval_coverage", "interval_coverage.json", ("--sims=1000",), ("--sims=200", "--sizes=10,30,100")),
    Step("soft_test_level", "soft_test_level.json", (), ("--sims=1000", "--sizes=10,30,100")),
    Step("year_of_nights", "year_of_nights.json", (), ("--nights=30",)),
    Step("gate_power_smollm2", "gate_power_smollm2.json", full_only=True),
)


def run_step(step: Step, quick: bool) -> dict[str, Any]:
    target = OUT_DIR / step.output
    target.unlink(missing_ok=True)  # never report a previous run's numbers as this one's
    command = [sys.executable, "-m", f"benchmarks.{step.name}", *(step.quick if quick else step.full)]
    print(f"== {' '.join(command[1:])}", flush=True)
    before, started = load(), time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=suite_env(), capture_output=True, text=True)
    entry: dict[str, Any] = {
        "command": " ".join(["python", *command[1:]]),
        "seconds": round(time.perf_counter() - started, 1),
        "load_before": before,
        "load_after": load(),
        "returncode": proc.returncode,
    }
    tail = "\n".join(line for line in proc.stdout.splitlines()[-25:])
    print(tail, flush=True)
    if proc.returncode != 0 or not target.exists():
        entry["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        print(proc.stderr[-2000:], file=sys.stderr)
    else:
        entry["result"] = json.loads(target.read_text())
    print(f"   {entry['seconds']} s, load {before[0]} -> {entry['load_after'][0]}", flush=True)
    return entry


def collected(step: Step) -> dict[str, Any]:
    """What a benchmark left under reports/benchmarks/, without running it (``--collect``)."""
    target = OUT_DIR / step.output
    if not target.exists():
        return {"returncode": 1, "error": "not run"}
    result = json.loads(target.read_text())
    return {
        "returncode": 0,
        "result": result,
        "load_before": result.get("load_before"),
        "load_after": result.get("load_after"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"smaller runs, a few minutes; {table.PAGE} untouched"
    )
    parser.add_argument(
        "--only", default="", help=f"comma-separated benchmark names ({table.PAGE} untouched)"
    )
    parser.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: build the JSON and table from what the benchmarks wrote",
    )
    args = parser.parse_args()
    chosen = {n for n in args.only.split(",") if n}
    steps = [
        s for s in (*STEPS, gpu_step()) if (not chosen or s.name in chosen) and not (args.quick and s.full_only)
    ]
    started, before = time.perf_counter(), load()
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "quick": args.quick,
        "machine": machine(),
        "load_before": before,
        "collected": args.collect,
        "benchmarks": {
            step.name: collected(step) if args.collect else run_step(step, args.quick) for step in steps
        },
    }
    results["load_after"] = load()
    results["total_s"] = round(time.perf_counter() - started, 1)
    partial = args.quick or bool(chosen)
    stem = results["date"] + ("-quick" if args.quick else "") + ("-partial" if chosen else "")
    (OUT_DIR / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    text = table.markdown(results)
    (OUT_DIR / ("quick.md" if partial else "README.md")).write_text("# Benchmarks\n\n" + text)
    if not partial:
        page = ROOT / table.PAGE
        page.write_text(table.replace_between(page.read_text(), text))
    print(text)
    print(f"written: reports/benchmarks/{stem}.json and the table ({results['total_s'] / 60:.1f} min)")


if __name__ == "__main__":
    main()
