"""A batch request's body and a batch reply's Response, each as litellm makes it for the same live call.

``body``: the body litellm sends for the live call, built from the live call's own parameters
(backends/chat/api.py ``chat_params``: messages, temperature, max_tokens, seed with drop_params), then
litellm's own parameter mapping for the provider and model (``get_optional_params``: an o-series model takes
``max_completion_tokens`` and, with drop_params, no temperature) and the provider's request transformation
(Anthropic: the system prompt apart, content blocks). What the provider's own client does to it after that
is the provider module's (OpenAI: the openai SDK's ``extra_body``). ``answer``: a reply litellm's response
conversion for the provider read (a ModelResponse), read by the live path's ``as_response``. One source each
way: what the live call asks, a batch asks; what the live path reads, a batch reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...types import Decoding, Prompt, Response
from ..chat.api import as_response, chat_params
from .pricing import Pricing
from .protocol import ERROR_CHARS, Unreadable, Unsendable, failed_request, shown


def body(litellm: Any, provider: str, model: str, prompt: Prompt, decoding: Decoding) -> dict[str, Any]:
    """What litellm's request transformation for ``provider`` (litellm's name for it) makes of the live
    call of ``prompt`` to ``model`` (the name less its provider prefix); Unsendable with the live call's own
    error where litellm refuses the call."""
    params = chat_params(prompt, decoding)
    messages = params.pop("messages")
    try:
        optional = litellm.get_optional_params(model=model, custom_llm_provider=provider, **params)
        config = litellm.ProviderConfigManager.get_provider_chat_config(
            model=model, provider=litellm.LlmProviders(provider)
        )
        return dict(config.transform_request(model, messages, optional, {}, {}))
    except Exception as exc:  # litellm's UnsupportedParamsError and kin: the live call's item error
        raise Unsendable(shown(f"{type(exc).__name__}: {exc}", ERROR_CHARS)) from exc


def answer(parse: Callable[[], Any], batch_id: str, price: Pricing) -> Response:
    """A succeeded reply as the live path reads it: ``parse`` is litellm's response conversion for the
    provider (a ModelResponse), read by ``as_response`` (text, tokens, finish reason, the model the reply
    names), priced at the batch rate; a reply without a choice is a failed request; Unreadable where litellm
    cannot read the reply."""
    try:
        response = as_response(parse(), None)
    except Exception as exc:  # a reply litellm cannot read is no answer
        raise Unreadable(f"a reply litellm cannot read: {_why(exc)}") from exc
    if response.error is not None:
        return failed_request(batch_id, response.error)
    response.meta["batch"] = batch_id
    return price.priced(response)


def _why(exc: BaseException) -> str:
    """The innermost error of ``exc`` (litellm wraps a reply it cannot read in one that quotes a traceback)."""
    inner = exc
    for _ in range(10):
        inner = inner.__cause__ or inner.__context__ or inner
        if inner.__cause__ is None and inner.__context__ is None:
            break
    return shown(f"{type(inner).__name__}: {inner}", 200)
