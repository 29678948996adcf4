"""A batch request's body: the body litellm sends for the same live call, built from the live call's own
parameters (backends/http/api.py ``chat_params``: messages, temperature, max_tokens, seed with drop_params), then
litellm's own parameter mapping for the provider and model (``get_optional_params``: an o-series model takes
``max_completion_tokens`` and, with drop_params, no temperature) and the provider's request transformation
(Anthropic: the system prompt apart, content blocks). One source: what the live call asks, a batch asks."""

from __future__ import annotations

from typing import Any

from ...types import Decoding, Prompt
from ..http.api import chat_params
from .protocol import ERROR_CHARS, Unsendable, shown


def body(litellm: Any, provider: str, model: str, prompt: Prompt, decoding: Decoding) -> dict[str, Any]:
    """What litellm would send ``provider`` for the live call of ``prompt`` to ``model`` (the name less its
    provider prefix); Unsendable with the live call's own error where litellm refuses the call."""
    params = chat_params(prompt, decoding)
    messages = params.pop("messages")
    try:
        optional = litellm.get_optional_params(model=model, custom_llm_provider=provider, **params)
        config = litellm.ProviderConfigManager.get_provider_chat_config(
            model=model, provider=litellm.LlmProviders(provider)
        )
        sent: dict[str, Any] = dict(config.transform_request(model, messages, optional, {}, {}))
    except Exception as exc:  # litellm's UnsupportedParamsError and kin: the live call's item error
        raise Unsendable(shown(f"{type(exc).__name__}: {exc}", ERROR_CHARS)) from exc
    if provider == "openai":  # what the openai SDK does with litellm's arguments before it sends them
        extra = sent.pop("extra_body", None) or {}
        if sent.get("stream") is False:
            del sent["stream"]
        sent.update(extra)
    return sent
