"""Backend settings from the command line, in one value that every backend factory takes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BackendOptions:
    api_base: str | None = None
    """api: base URL of an OpenAI-compatible server."""
    model_config: Path | None = None
    """api: a litellm Router configuration (several deployments of one model)."""
    max_concurrency: int = 16
    """api: requests in flight per process."""
    num_retries: int = 4
    """api: retries per request on 429, 5xx and timeouts."""
    request_timeout: float = 120.0
    """api: seconds before one request counts as timed out."""
    device: str = "auto"
    """hf: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps."""
    batch_size: int | None = None
    """hf: prompts per forward pass; None finds one automatically."""
    scoring: str = "generate"
    """hf: `generate` (greedy decoding) or `logprob` (label probabilities, one-word and json formats)."""
    chat_template: str = "auto"
    """hf: `auto` applies the tokenizer's chat template when it has one; `none` sends the plain prompt text,
    as the authors' Hugging Face notebook did."""
    model_revision: str | None = None
    """What the user states the model is (their fine-tune's commit): recorded and part of every cache key."""
    worker: str = "main"
    """The xdist worker id (`gw0`, ...) or `main`; hf pins worker gwK to GPU K mod N."""
