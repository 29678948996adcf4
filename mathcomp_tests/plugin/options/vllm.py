"""The --vllm-* options: how the server the suite starts for --model=vllm:... runs (see plugin/serving.py)."""

from __future__ import annotations

from typing import Any


def add(option: Any) -> None:
    """The options of --model=vllm:..., passed to the server the suite starts."""
    option(
        "--vllm-python",
        "vllm: the Python interpreter (of a virtualenv with vLLM) that runs the server",
        "this interpreter when it can import vllm",
        env="vllm_python",
    )
    option(
        "--vllm-tensor-parallel-size",
        "vllm: GPUs each copy of the model is split over",
        "vLLM's: 1",
        type=int,
    )
    option(
        "--vllm-data-parallel-size", "vllm: copies of the model, each on its own GPUs", "vLLM's: 1", type=int
    )
    option(
        "--vllm-dtype",
        "vllm: weights and activations dtype (auto, bfloat16, float16, float32)",
        "vLLM's: auto",
    )
    option("--vllm-max-model-len", "vllm: context length the server allows", "the model's", type=int)
    option(
        "--vllm-gpu-memory-utilization",
        "vllm: share of GPU memory the server may take",
        "vLLM's: 0.9",
        type=float,
    )
    option(
        "--vllm-args", 'vllm: further server arguments, one shell-quoted string, e.g. "--max-num-seqs 512"'
    )
    option("--vllm-start-timeout", "vllm: seconds the server may take to report healthy", 600.0, type=float)
