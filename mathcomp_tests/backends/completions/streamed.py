"""A streamed `/v1/completions` reply read back into the choices a plain reply holds.

A long generation (chain-of-thought: hundreds of tokens for each of many prompts) can take minutes before
its request returns; streamed, the server sends each step's tokens as they come, so every chunk is an
answer to the liveness (a slow engine that makes progress is never cut) while a stalled one is. vLLM
streams several prompts in one request, each chunk's choice carrying its prompt's index, its text and
token ids since the last chunk, and the prompt's token ids once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

STREAM_ABOVE_TOKENS = 64
"""Generation requests with a larger token budget are streamed; shorter ones return within a few hundred
engine steps, and streaming them would cost a chunk per token for nothing."""


class StreamError(ValueError):
    """The stream was cut or carried an error: the request is retried whole."""


async def read(lines: AsyncIterator[str], progress: Callable[[], None]) -> list[dict[str, Any]]:
    """The choices, in index order, of a streamed reply; ``progress`` is called at every chunk."""
    choices: dict[int, dict[str, Any]] = {}
    async for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return [choices[i] for i in sorted(choices)]
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise StreamError(f"malformed stream chunk: {data[:200]!r}") from exc
        if not isinstance(chunk, dict) or "error" in chunk:
            raise StreamError(f"the stream ended with an error: {data[:500]}")
        progress()
        try:
            for part in chunk.get("choices") or []:
                index = int(part["index"])
                _merge(choices.setdefault(index, {"index": index, "text": ""}), part)
        except (KeyError, TypeError, ValueError) as exc:
            raise StreamError(f"malformed stream chunk: {data[:200]!r}") from exc
    raise StreamError("the stream ended before [DONE]")


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    into["text"] += part.get("text") or ""
    if isinstance(part.get("token_ids"), list):
        into.setdefault("token_ids", []).extend(part["token_ids"])
    if isinstance(part.get("prompt_token_ids"), list):
        into["prompt_token_ids"] = part["prompt_token_ids"]
    if part.get("finish_reason") is not None:
        into["finish_reason"] = part["finish_reason"]
