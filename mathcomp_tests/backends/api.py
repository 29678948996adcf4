"""Models behind an API, through litellm: async fan-out under a concurrency limit, litellm's retries."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from ..types import Decoding, Prompt, Response
from .base import BackendError, OnResponse, redact
from .options import BackendOptions


class APIBackend:
    """Any litellm model string (`openai/...`, `anthropic/...`), or an OpenAI-compatible server via api_base."""

    revision = ""

    def __init__(self, model: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        try:
            import litellm
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendError("the api backend needs litellm: pip install 'mathcomp-tests[api]'") from exc
        litellm.suppress_debug_info = True
        self._litellm = litellm
        self.model = model
        self.api_base = options.api_base
        self.model_id = model if self.api_base is None else f"{model}@{self.api_base}"
        self.max_concurrency = max(1, options.max_concurrency)
        self.num_retries = options.num_retries
        self.timeout = options.request_timeout

    def cache_settings(self) -> dict[str, object]:
        return {}

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        return asyncio.run(self._complete_all(prompts, decoding, on_response))

    async def _complete_all(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None
    ) -> list[Response]:
        limit = asyncio.Semaphore(self.max_concurrency)

        async def one(index: int, prompt: Prompt) -> Response:
            async with limit:
                response = await self._ask(prompt, decoding)
            if on_response:
                on_response(index, response)
            return response

        return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts))))

    async def _ask(self, prompt: Prompt, decoding: Decoding) -> Response:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in prompt.messages],
            "temperature": decoding.temperature,
            "max_tokens": decoding.max_new_tokens,
            "num_retries": self.num_retries,
            "timeout": self.timeout,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
            kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY") or "not-needed")
        try:
            result = await self._litellm.acompletion(**kwargs)
        except Exception as exc:  # every provider error becomes a recorded, reported item error
            return Response(text="", error=redact(f"{type(exc).__name__}: {exc}"))
        choice = result.choices[0]
        text = choice.message.content or ""
        usage = getattr(result, "usage", None)
        return Response(
            text=text,
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            meta={"finish_reason": getattr(choice, "finish_reason", None)},
        )

    def close(self) -> None:
        return None
