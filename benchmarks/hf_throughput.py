"""How fast the hf backend answers MathComp prompts, measured: ``python -m benchmarks.hf_throughput``.

Prompts per second on the same one-word prompts (the bundled scenarios under every framing and
position) for: batched greedy generation (automatic batch size) against one prompt at a time, and the
whole matrix in one call (one batch stream) against one call per case (what pytest does);
label-logprob scoring against generation, and how often the two disagree; and lm-evaluation-harness'
HF backend (HFLM) on the same rendered prompts. Model loading and a warm-up batch are not timed.
Prints a table and writes ``reports/benchmarks/hf_throughput-<device>.{json,md}``.

lm-evaluation-harness lives in its own environment, never in the project's: ``--setup-lmeval``
creates ``benchmarks/.venv-lmeval`` (it reuses the project's torch and transformers and adds lm_eval).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mathcomp_tests import formats, prompts
from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.data import scenarios
from mathcomp_tests.paths import ROOT, fixtures
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, LABELS, POSITIONS, Condition, Decoding, Prompt

DEFAULT_MODEL = "fixtures/models/mathcomp-tiny"
LMEVAL_ENV = ROOT / "benchmarks" / ".venv-lmeval"
LMEVAL_PIN = "lm_eval==0.4.13"
OUT_DIR = ROOT / "reports" / "benchmarks"
DECODING = Decoding(max_new_tokens=8)


def one_word_prompts(limit: int | None) -> list[Prompt]:
    prompt_set = prompts.load_prompt_set("hf")
    names = prompts.std_names(prompt_set)
    rows = scenarios.first(scenarios.load(fixtures() / "scenarios.csv"), limit)
    return [
        prompts.build(s, Condition(f, p), prompt_set, names)
        for f in FRAMINGS
        for p in POSITIONS
        for s in rows
    ]


def timed(backend: HFBackend, batch: list[Prompt]) -> tuple[float, list[Any]]:
    backend.complete(batch[:8], DECODING)  # warm-up: weights loaded, kernels chosen
    started = time.perf_counter()
    responses = backend.complete(batch, DECODING)
    return time.perf_counter() - started, responses


def timed_per_case(backend: HFBackend, batch: list[Prompt], case_size: int) -> float:
    """Seconds for the same prompts sent one case at a time (one ``complete`` call per case, as pytest does)."""
    backend.complete(batch[:8], DECODING)
    started = time.perf_counter()
    for i in range(0, len(batch), case_size):
        backend.complete(batch[i : i + case_size], DECODING)
    return time.perf_counter() - started


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    batch = one_word_prompts(args.limit)
    single = batch[:: max(1, len(batch) // args.single)][: args.single]
    options = BackendOptions(device=args.device, batch_size=args.batch_size)
    generate = HFBackend(args.model, options)
    results: dict[str, Any] = {
        "model": args.model,
        "revision": generate.revision,
        "device": generate.device,
        "device_name": _device_name(torch, generate.device),
        "dtype": str(generate.dtype).removeprefix("torch."),
        "torch_threads": torch.get_num_threads(),
        "prompts": len(batch),
        "python": platform.python_version(),
        "torch": torch.__version__,
    }
    seconds, generated = timed(generate, batch)
    results["generate_batched"] = _rate(len(batch), seconds, batch_size=generate.batch_size)
    case_size = len(batch) // (len(FRAMINGS) * len(POSITIONS))
    results["case_size"] = case_size
    seconds = timed_per_case(generate, batch, case_size)
    results["generate_per_case"] = _rate(len(batch), seconds, batch_size=generate.batch_size)
    one = HFBackend(args.model, BackendOptions(device=args.device, batch_size=1))
    seconds, generated_one = timed(one, single)
    results["generate_single"] = _rate(len(single), seconds, batch_size=1)
    same = [batch.index(p) for p in single]
    results["single_matches_batched"] = sum(
        r.text == generated[i].text for r, i in zip(generated_one, same, strict=True)
    ) / len(single)
    scorer = HFBackend(
        args.model, BackendOptions(device=args.device, batch_size=args.batch_size, scoring="logprob")
    )
    seconds, scored = timed(scorer, batch)
    results["logprob_batched"] = _rate(len(batch), seconds, batch_size=scorer.batch_size)
    seconds = timed_per_case(scorer, batch, case_size)
    results["logprob_per_case"] = _rate(len(batch), seconds, batch_size=scorer.batch_size)
    read = [formats.read(p, r) for p, r in zip(batch, generated, strict=True)]
    valid = [i for i, p in enumerate(read) if p.label is not None]
    results["generate_invalid_rate"] = 1 - len(valid) / len(batch)
    results["logprob_vs_generate_disagreement"] = sum(read[i].label != scored[i].text for i in valid) / max(
        1, len(valid)
    )
    results["speedup_batched_vs_single"] = (
        results["generate_batched"]["per_s"] / results["generate_single"]["per_s"]
    )
    results["speedup_logprob_vs_generate"] = (
        results["logprob_batched"]["per_s"] / results["generate_batched"]["per_s"]
    )
    if not args.no_lmeval:
        texts = [generate.render(p) for p in batch]
        results["lm_eval"] = _lm_eval(
            args, generate, texts, [r.text for r in generated], [r.text for r in scored]
        )
    return results


def _lm_eval(
    args: argparse.Namespace, backend: HFBackend, texts: list[str], ours: list[str], scored: list[str]
) -> dict[str, Any]:
    python = LMEVAL_ENV / "bin" / "python"
    if not python.exists():
        return {"skipped": f"no {LMEVAL_ENV.relative_to(ROOT)}: run with --setup-lmeval once"}
    n_ll = min(len(texts), args.loglikelihood)
    job = {
        "model": str(backend.directory),
        "device": backend.device,
        "batch_size": backend.batch_size,
        "dtype": str(backend.dtype).removeprefix("torch."),
        "texts": texts,
        "max_new_tokens": DECODING.max_new_tokens,
        "labels": list(LABELS),
        "loglikelihood_prompts": n_ll,
        "case_size": len(texts) // (len(FRAMINGS) * len(POSITIONS)),
    }
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp, "in.json"), Path(tmp, "out.json")
        source.write_text(json.dumps(job))
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        side = Path(__file__).with_name("lmeval_side.py")
        proc = subprocess.run(
            [str(python), str(side), str(source), str(target)], env=env, capture_output=True, text=True
        )
        if proc.returncode != 0:
            return {"failed": proc.stderr[-2000:]}
        out = json.loads(target.read_text())
    gen = _rate(len(texts), out["generate_s"], batch_size=backend.batch_size)
    ll = _rate(out["loglikelihood_prompts"], out["loglikelihood_s"], batch_size=backend.batch_size)
    return {
        "version": out["lm_eval_version"],
        "generate": gen,
        "generate_per_case": _rate(len(texts), out["generate_per_case_s"], batch_size=backend.batch_size),
        "loglikelihood_3_labels": ll,
        "same_answers_as_ours": sum(a.strip() == b.strip() for a, b in zip(out["answers"], ours, strict=True))
        / len(texts),
        "loglikelihood_label_agrees_with_our_logprob": sum(
            a == b for a, b in zip(out["loglikelihood_labels"], scored, strict=False)
        )
        / max(1, n_ll),
    }


def _rate(n: int, seconds: float, batch_size: int) -> dict[str, float | int]:
    return {
        "prompts": n,
        "seconds": round(seconds, 3),
        "per_s": round(n / seconds, 1),
        "batch_size": batch_size,
    }


def _device_name(torch: Any, device: str) -> str:
    if device.startswith("cuda"):
        return str(torch.cuda.get_device_name(device))
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def report(results: dict[str, Any]) -> str:
    """The numbers as a Markdown table (also what the script prints)."""
    lines = [
        f"# hf backend throughput: {results['model']} ({results['revision']}) on {results['device']}",
        "",
        f"{results['device_name']}; {results['dtype']}; torch {results['torch']}, {results['torch_threads']} threads; "
        f"{results['prompts']} one-word prompts (bundled scenarios x 7 framings x 2 positions).",
        "",
        "| path | prompts | seconds | prompts/s | batch size |",
        "|---|---:|---:|---:|---:|",
    ]
    rows = [
        ("generate, batched, whole matrix in one call (ours)", results["generate_batched"]),
        ("generate, batched, one call per case (ours)", results["generate_per_case"]),
        ("generate, one prompt at a time (ours)", results["generate_single"]),
        ("label logprob, batched, whole matrix (ours)", results["logprob_batched"]),
        ("label logprob, batched, one call per case (ours)", results["logprob_per_case"]),
    ]
    lm_eval = results.get("lm_eval", {})
    if "generate" in lm_eval:
        rows += [
            (f"lm-eval {lm_eval['version']} HFLM generate_until, whole matrix", lm_eval["generate"]),
            (
                f"lm-eval {lm_eval['version']} HFLM generate_until, one call per case",
                lm_eval["generate_per_case"],
            ),
            (
                f"lm-eval {lm_eval['version']} HFLM loglikelihood (3 labels)",
                lm_eval["loglikelihood_3_labels"],
            ),
        ]
    for name, r in rows:
        lines.append(f"| {name} | {r['prompts']} | {r['seconds']} | {r['per_s']} | {r['batch_size']} |")
    lines += [
        "",
        f"- batched vs one at a time: {results['speedup_batched_vs_single']:.1f}x "
        f"(one-at-a-time answers identical to batched: {100 * results['single_matches_batched']:.1f}%)",
        f"- logprob vs generate: {results['speedup_logprob_vs_generate']:.1f}x; they disagree on "
        f"{100 * results['logprob_vs_generate_disagreement']:.1f}% of the prompts generate answered validly "
        f"(generate invalid: {100 * results['generate_invalid_rate']:.1f}%)",
    ]
    if "generate" in lm_eval:
        ratio = results["generate_batched"]["per_s"] / lm_eval["generate"]["per_s"]
        ll_ratio = results["logprob_batched"]["per_s"] / lm_eval["loglikelihood_3_labels"]["per_s"]
        lines += [
            f"- ours vs lm-eval, generation: {ratio:.2f}x (same answers: {100 * lm_eval['same_answers_as_ours']:.1f}%)",
            f"- ours (label logprob) vs lm-eval loglikelihood over the three labels: {ll_ratio:.2f}x "
            f"(same label: {100 * lm_eval['loglikelihood_label_agrees_with_our_logprob']:.1f}%)",
        ]
    else:
        lines.append(
            f"- lm-eval: {lm_eval.get('skipped') or lm_eval.get('failed') or 'not run (--no-lmeval)'}"
        )
    return "\n".join(lines) + "\n"


def setup_lmeval() -> None:
    """A venv of its own that sees the project's packages (a .pth line) and adds lm_eval to them."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", str(LMEVAL_ENV)], check=True)
    base = subprocess.run(
        [
            str(LMEVAL_ENV / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(base, "mathcomp-project.pth").write_text(ours + "\n")
    pip = [
        str(LMEVAL_ENV / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "-c",
        str(ROOT / "constraints.txt"),
    ]
    subprocess.run([*pip, LMEVAL_PIN], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="hub id or directory (default: %(default)s)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N, mps")
    parser.add_argument("--batch-size", type=int, default=None, help="default: automatic")
    parser.add_argument("--limit", type=int, default=None, help="only the first N scenarios")
    parser.add_argument(
        "--single", type=int, default=280, help="prompts timed one at a time (default: %(default)s)"
    )
    parser.add_argument("--loglikelihood", type=int, default=1400, help="prompts for lm-eval loglikelihood")
    parser.add_argument("--no-lmeval", action="store_true", help="skip the lm-evaluation-harness comparison")
    parser.add_argument("--setup-lmeval", action="store_true", help=f"create {LMEVAL_ENV.name} and exit")
    args = parser.parse_args()
    from benchmarks.common import load

    before = load()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.setup_lmeval:
        setup_lmeval()
        return
    results = run(args)
    results.update(load_before=before, load_after=load())
    text = report(results)
    print(text)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    stem = f"hf_throughput-{results['device'].replace(':', '')}"
    (OUT_DIR / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (OUT_DIR / f"{stem}.md").write_text(text)
    print(f"written: {OUT_DIR / stem}.json, .md")


if __name__ == "__main__":
    main()
