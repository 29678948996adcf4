"""Anthropic's Message Batches for ``anthropic/<model>`` under --batch.

The requests are the ones the live path sends: litellm's own Anthropic transformation turns our chat
messages and decoding into Messages API params (system prompt apart, ``max_tokens``, no seed), and each
request's custom id is its cache key (64 hex digits: Anthropic takes 1 to 64 of ``[a-zA-Z0-9_-]``). The
results are fetched through litellm (``file_content`` with the batch id), and each succeeded message goes
through litellm's Anthropic response transformation and the live path's ``as_response``: the Response
the live path would have made (text, tokens, finish reason, model), priced at the batch rate.

litellm (1.106) cannot create an Anthropic batch, and its status maps an ended batch with expired or
cancelled requests to `completed`; so creating and looking at a batch are two plain HTTP calls here, with
litellm's Anthropic headers (key, version, beta). A create is never retried: a timeout may hide a batch
that was made, and a second create would pay twice.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..types import Decoding, Prompt, Response
from .api import as_response
from .base import ERROR_CHARS, BackendError
from .batch_api import BatchState, Pricing, Result, Results, Unreadable, failure, priced, shown, unreadable
from .secrets import redact

MAX_REQUESTS = 100_000
"""Anthropic's limit of requests per batch."""
MAX_BYTES = 256 * 1000 * 1000
"""Anthropic's limit of a batch's size."""
TIMEOUT = 120.0
KINDS = ("succeeded", "errored", "canceled", "expired")
"""The result types Anthropic documents."""


class AnthropicBatches:
    """The Message Batches endpoints of one server (``api_base``; None: Anthropic's own) for one model."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None):
        from litellm.llms.anthropic.batches.transformation import AnthropicBatchesConfig

        self._litellm = litellm
        self.model = model
        self._config = AnthropicBatchesConfig()
        self._chat = litellm.AnthropicConfig()
        self._base = (api_base or self._config.anthropic_model_info.get_api_base(None) or "").rstrip("/")
        self._key = api_key
        self._client: Any = None

    def line(self, key: str, prompt: Prompt, decoding: Decoding) -> bytes:
        messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
        wanted = {"temperature": decoding.temperature, "max_tokens": decoding.max_new_tokens}
        optional = self._chat.map_openai_params(wanted, {}, self.model, drop_params=True)
        params = self._chat.transform_request(self.model, messages, optional, {}, {})
        return (json.dumps({"custom_id": key, "params": params}, sort_keys=True) + "\n").encode()

    def _headers(self) -> dict[str, str]:
        try:
            return dict(
                self._config.validate_environment(
                    headers={},
                    model=self.model,
                    messages=[],
                    optional_params={},
                    litellm_params={},
                    api_key=self._key,
                    api_base=self._base,
                )
            )
        except ValueError as exc:  # litellm: no key in the deployment or ANTHROPIC_API_KEY
            raise BackendError(f"--batch with an Anthropic model needs ANTHROPIC_API_KEY: {exc}") from exc

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=TIMEOUT)
        try:
            reply = await self._client.request(method, f"{self._base}{path}", headers=self._headers(), json=body)
        except httpx.HTTPError as exc:
            raise failure(f"{method} {path}", exc) from exc
        if reply.status_code != 200:
            raise BackendError(
                redact(f"{method} {path}: HTTP {reply.status_code}: {reply.text[:ERROR_CHARS]}")[:ERROR_CHARS]
            )
        try:
            found = reply.json()
        except ValueError:
            found = None
        if not isinstance(found, dict) or not isinstance(found.get("id"), str):
            raise BackendError(f"{method} {path}: the reply is not a message batch: {reply.text[:500]!r}")
        return found

    async def create(self, data: bytes) -> tuple[str, BatchState]:
        requests = [json.loads(line) for line in data.splitlines() if line.strip()]
        try:
            batch = await self._call("POST", "/v1/messages/batches", {"requests": requests})
        except BackendError as exc:
            raise BackendError(f"could not create a batch: {exc}") from exc
        except Exception as exc:
            raise BackendError(redact(f"could not create a batch: {type(exc).__name__}: {exc}")[:ERROR_CHARS]) from exc
        return "", state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        return state(await self._call("GET", f"/v1/messages/batches/{batch_id}"))

    async def answers(self, state: BatchState, price: Pricing) -> Results:
        try:
            got = await asyncio.to_thread(
                self._litellm.file_content,
                file_id=state.id,
                custom_llm_provider="anthropic",
                api_base=self._base,
                api_key=self._key,
            )
            data = bytes(got.content)
        except Exception as exc:  # litellm's and httpx's own types: the backend's error outside
            raise failure(f"results of batch {state.id}", exc) from exc
        out = Results()
        for number, raw in enumerate(data.splitlines(), 1):
            if not raw.strip():
                continue
            at = f"batch {state.id}: results line {number}"
            try:
                line = json.loads(raw)
            except ValueError:
                out.unreadable.append(unreadable(at, "not JSON, expected one JSON result a line"))
                continue
            try:
                if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                    raise Unreadable("no custom_id")
                out.found.append(Result(line["custom_id"], self._response(line.get("result"), state.id, price), at))
            except Unreadable as exc:
                problem = f"not a batch result ({exc}), expected custom_id and a result {{type, message or error}}"
                out.unreadable.append(unreadable(at, problem))
        return out

    def _response(self, result: Any, batch_id: str, price: Pricing) -> Response:
        """One result: a succeeded message as the live path reads it, else a failed request; Unreadable
        where it is neither."""
        kind = result.get("type") if isinstance(result, dict) else None
        if not isinstance(result, dict) or kind not in KINDS:
            raise Unreadable("the result is not an object with a known type")
        if kind != "succeeded":
            error = result.get("error")
            detail = json.dumps(error)[:ERROR_CHARS] if error else f"the request was {kind}"
            return Response(text="", error=redact(f"batch {batch_id}: {kind}: {detail}")[:ERROR_CHARS])
        import httpx
        from litellm import ModelResponse

        message = result.get("message")
        if not isinstance(message, dict):
            raise Unreadable("a succeeded result without a message")
        try:
            parsed = self._chat.transform_parsed_response(
                completion_response=message,
                raw_response=httpx.Response(200, json=message),
                model_response=ModelResponse(),
            )
        except Exception as exc:  # a message litellm cannot read is no answer
            raise Unreadable(f"a message litellm cannot read: {shown(exc, 200)}") from exc
        response = as_response(parsed, None)
        if response.error is None:
            response.meta["batch"] = batch_id
        return priced(response, price)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def state(batch: dict[str, Any]) -> BatchState:
    """A Message Batch as the batch run reads a batch: an ended batch whose requests were cancelled is
    `cancelled`, one with expired requests `expired`, else `completed` (its results are read by batch id,
    so it names no output file)."""
    counts = batch.get("request_counts") or {}

    def count(name: str) -> int:
        value = counts.get(name, 0)
        return value if isinstance(value, int) else 0

    status = str(batch.get("processing_status"))
    if status == "ended":
        status = "cancelled" if count("canceled") else "expired" if count("expired") else "completed"
    elif status == "canceling":
        status = "cancelling"  # OpenAI's spelling, as the progress lines say it
    total = sum(count(k) for k in ("processing", "succeeded", "errored", "canceled", "expired"))
    return BatchState(str(batch["id"]), status, total, count("succeeded"), count("errored"))
