"""The options of models behind a server (api, vllm): retries, timeouts, concurrency, how requests are
batched, and when a server counts as gone or down (backends/liveness.py)."""

from __future__ import annotations

from typing import Any


def add(option: Any) -> None:
    """Declared through ``option`` (plugin/options/__init__.py), in the order docs/options.md lists them."""
    option("--num-retries", "api backend: retries on 429, 5xx, timeouts and malformed replies", 4, type=int)
    option("--request-timeout", "api backend: seconds per attempt", 120.0, type=float)
    option(
        "--model-config",
        "api backend: a litellm Router config (YAML or JSON); under --api-batching=completions each "
        "deployment of the --model group is one OpenAI-compatible server, all of one model",
    )
    option(
        "--max-error-rate",
        "fail a case when more than this share (0 to 1) of its requests failed",
        "error_rate from thresholds.toml",
        type=float,
    )
    option(
        "--max-concurrency",
        "api and vllm backends: requests in flight per process",
        "16 chat requests; 4 batched completions requests",
        type=int,
    )
    option(
        "--api-batching",
        "api backend: chat sends one chat request per prompt through the litellm Router; completions "
        "renders each prompt with the model's chat template (its tokenizer: the server's /v1/models root, "
        "else the model name) and sends --batch-size prompts per /v1/completions request (an "
        "OpenAI-compatible server such as vLLM; vllm:... always does)",
        "chat",
        default="chat",
        choices=("chat", "completions"),
    )
    option(
        "--max-connection-failures",
        "api and vllm backends: connection failures in a row after which the server counts as gone and the "
        "run stops (what was answered stays in the cache)",
        20,
        type=int,
    )
    option(
        "--server-timeout",
        "api and vllm backends: seconds without an answer to a completion request while requests wait (a "
        "passed health check is none), after which the run stops; a server that never answers ends a run "
        "in this plus the start-up (under 150 s)",
        90.0,
        type=float,
    )
    option(
        "--max-error-streak",
        "api and vllm backends: error replies (408, 429, 5xx; a chat request counts once, after its "
        "retries) in a row with no answer between, after which the server counts as down and the run stops",
        32,
        type=int,
    )
