"""--batch: an API model answered through its provider's batch API.

``protocol`` is the provider-neutral interface (requests, ``BatchStatus``, results, the errors, and
``BatchProvider``: what a provider module offers); ``PROVIDERS`` below names each provider's module, imported
when a run uses it (a new provider is its module and one line here). ``openai`` and ``anthropic`` implement
it, each encoding its requests from the live call's own parameters and reading its replies as the live path
does (``encoding``); ``pricing`` says what an answer cost; ``submissions`` keeps every batch created in the
cache folder so that none is paid twice; ``runner`` creates, waits, collects and resends; ``backend`` is the
Backend the response cache wraps, holding the live api backend and the runner; ``outcome`` is what the
batches did, as summary.json's `batch` section says it. Nothing heavy is imported here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..base import BackendError

if TYPE_CHECKING:
    from .protocol import BatchProvider

PROVIDERS: dict[str, str] = {
    "openai": "mathcomp_tests.backends.batch.openai:OpenAIBatches",
    "anthropic": "mathcomp_tests.backends.batch.anthropic:AnthropicBatches",
}
"""Provider (a model string's prefix, `openai/<name>`) -> ``module:Class``, a ``BatchProvider``: OpenAI's
Batch API (and any OpenAI-compatible server that serves the Files and Batches endpoints), Anthropic's Message
Batches."""


def provider(name: str) -> BatchProvider:
    """The batch provider ``PROVIDERS`` names ``name``, its module imported now; BackendError for none."""
    target = PROVIDERS.get(name)
    if target is None:
        raise BackendError(f"no batch provider {name!r}; known: {', '.join(PROVIDERS)}")
    module, attribute = target.split(":")
    found: BatchProvider = getattr(importlib.import_module(module), attribute)
    return found
