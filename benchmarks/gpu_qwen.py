"""The hf backend on a GPU with a model of Qwen2.5-3B's size: ``python -m benchmarks.gpu_qwen``.

Builds a model with the Qwen2.5-3B architecture (transformers' Qwen2Config with its published sizes:
36 layers, hidden 2048, MLP 11008, 16 query and 2 key-value heads, tied embeddings) and random weights,
in bf16, writes it to a temporary directory with the embedded demo model's tokenizer (it builds offline),
and runs the hf backend over the one-word matrix: greedy generation and label logprob, each as one
``complete`` call per case (300 prompts, as pytest runs it) and as the whole matrix in one call. Reports
prompts/s, prompt and generated tokens/s, the time 33,600 prompts (the matrix with the paper's identities)
would take, and the prefill FLOPs (2 x parameters x prompt tokens) per second as a share of the GPU's
dense bf16 peak. The compute is that of the real model except the vocabulary: the demo tokenizer has a
few hundred tokens, not Qwen's 151,936, so the embedding and the (tied) output layer are smaller; the
parameter count used for FLOPs is the built model's. Random weights answer nonsense: the answers are
not the point, and generation runs to the token budget (8 new tokens) unless it hits the end token.

``--tiny`` builds a 2-layer model of the same family that runs on the CPU, to test this script's path;
its figure says nothing about a GPU. Writes reports/benchmarks/gpu_qwen-<device>.json.

    .venv/bin/python -m benchmarks.gpu_qwen                  # on a machine with a CUDA GPU
    .venv/bin/python -m benchmarks.gpu_qwen --tiny --device=cpu
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import ROOT, load, machine, write_json
from mathcomp_tests import prompts
from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.data import scenarios
from mathcomp_tests.paths import fixtures
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, POSITIONS, Condition, Decoding, Prompt

QWEN25_3B: dict[str, Any] = {
    "hidden_size": 2048,
    "intermediate_size": 11008,
    "num_hidden_layers": 36,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True,
}
TINY = {
    **QWEN25_3B,
    "hidden_size": 64,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
}
PEAK_BF16_DENSE_TFLOPS = {
    "H200": 989.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10": 125.0,
}
"""Dense bf16 peak per GPU (vendor figures, no sparsity), matched by substring of the device name."""
TOKENIZER = ROOT / "fixtures" / "models" / "mathcomp-tiny"
DECODING = Decoding(max_new_tokens=8)
MATRIX_PROMPTS = 33_600


def peak_tflops(device_name: str) -> float | None:
    for key, value in PEAK_BF16_DENSE_TFLOPS.items():
        if key in device_name:
            return value
    return None


def build_model(directory: Path, tiny: bool) -> int:
    """Random-weight Qwen2 of the chosen size, bf16, saved with the demo tokenizer; returns its parameters."""
    import torch
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
    sizes = TINY if tiny else QWEN25_3B
    config = Qwen2Config(
        **sizes,
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        dtype="bfloat16",
    )
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() and not tiny else "cpu"):
        model = Qwen2ForCausalLM(config).to(dtype=torch.bfloat16)  # type: ignore[call-arg]
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return sum(p.numel() for p in model.parameters())


def matrix_prompts(limit: int | None) -> list[list[Prompt]]:
    """The one-word cases (7 framings x 2 positions, identity std), each a list of its prompts."""
    prompt_set = prompts.load_prompt_set("hf")
    names = prompts.std_names(prompt_set)
    rows = scenarios.first(scenarios.load(fixtures() / "scenarios.csv"), limit)
    return [
        [prompts.build(s, Condition(f, p), prompt_set, names) for s in rows]
        for f in FRAMINGS
        for p in POSITIONS
    ]


def timed(backend: HFBackend, calls: list[list[Prompt]]) -> dict[str, Any]:
    import torch

    backend.complete(calls[0][:8], DECODING)  # warm-up: weights loaded, kernels chosen
    if backend.device.startswith("cuda"):
        torch.cuda.synchronize()
    started = time.perf_counter()
    responses = [r for call in calls for r in backend.complete(call, DECODING)]
    if backend.device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    prompt_tokens = sum(len(backend.tokenizer(backend.render(p)).input_ids) for call in calls for p in call)
    new_tokens = sum(r.output_tokens or 0 for r in responses)
    n = sum(len(call) for call in calls)
    return {
        "prompts": n,
        "calls": len(calls),
        "seconds": round(seconds, 3),
        "prompts_per_s": round(n / seconds, 1),
        "prompt_tokens": prompt_tokens,
        "prompt_tokens_per_s": round(prompt_tokens / seconds, 1),
        "new_tokens_per_s": round(new_tokens / seconds, 1),
        "seconds_for_33600": round(MATRIX_PROMPTS * seconds / n, 1),
        "batch_size": backend.batch_size,
        "errors": sum(r.error is not None for r in responses),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    cases = matrix_prompts(args.limit)
    whole = [[p for case in cases for p in case]]
    with tempfile.TemporaryDirectory(prefix="mathcomp-qwen-") as tmp:
        params = build_model(Path(tmp), args.tiny)
        results: dict[str, Any] = {"parameters": params, "tiny": args.tiny, "runs": {}}
        for scoring in ("generate", "logprob"):
            options = BackendOptions(device=args.device, batch_size=args.batch_size, scoring=scoring)
            backend = HFBackend(tmp, options)
            results["device"], results["dtype"] = backend.device, str(backend.dtype).removeprefix("torch.")
            for layout, calls in (("per case", cases), ("whole matrix", whole)):
                results["runs"][f"{scoring}, {layout}"] = timed(backend, calls)
            del backend
    device = str(results["device"])
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else "cpu"
    peak = peak_tflops(name)
    results["device_name"], results["peak_bf16_tflops"] = name, peak
    for run in results["runs"].values():
        achieved = 2 * params * run["prompt_tokens_per_s"] / 1e12
        run["prefill_tflops"] = round(achieved, 3)
        run["share_of_peak"] = round(achieved / peak, 4) if peak else None
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model: tests the path on a CPU")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--batch-size", type=int, default=None, help="default: automatic")
    parser.add_argument("--limit", type=int, default=None, help="only the first N scenarios per case")
    args = parser.parse_args()
    before = load()
    results = run(args)
    results.update(machine=machine(), load_before=before, load_after=load())
    for name, r in results["runs"].items():
        share = "n/a" if r["share_of_peak"] is None else f"{100 * r['share_of_peak']:.1f}%"
        print(
            f"{name:<24} {r['prompts_per_s']:>9} prompts/s {r['prompt_tokens_per_s']:>11} prompt tok/s "
            f"{r['new_tokens_per_s']:>9} new tok/s  33,600 in {r['seconds_for_33600']} s  peak share {share}"
        )
    stem = f"gpu_qwen-{'tiny-' if args.tiny else ''}{str(results['device']).replace(':', '')}"
    print(f"written: {write_json(stem, results).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
