"""Anthropic's Message Batches for ``anthropic/<model>``: three plain HTTP calls (create with the requests
inline, look at a batch, download its results), each one request with Anthropic's headers (the key, the API
version), never retried here: the runner tries a failed look or download again at its next check, and a
create is never repeated (a timed-out create may have made a batch, and a second would pay twice).

Each request's custom id is its cache key (64 hex digits: Anthropic takes 1 to 64 of ``[a-zA-Z0-9_-]``) and
its params are what litellm sends for the same live call (encoding.py); they travel inline, so a batch has
no ``extras``. Each succeeded message goes through litellm's Anthropic response transformation and the live
path's ``as_response`` (encoding.py ``answer``): the Response the live path would have made (text, tokens,
finish reason, model), priced at the batch rate. An ended batch reads as `cancelled` when it holds cancelled
requests, `expired` when it holds expired ones, else `completed`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ...types import Response
from ..base import BackendError
from . import encoding
from .pricing import Pricing
from .protocol import (
    ERROR_CHARS,
    TIMEOUT,
    BatchRequest,
    BatchState,
    BatchStatus,
    Created,
    Result,
    Results,
    Unreadable,
    failed_request,
    failure,
    shown,
    unreadable,
)

MAX_REQUESTS = 100_000
"""Anthropic's limit of requests per batch."""
MAX_BYTES = 256 * 1000 * 1000
"""Anthropic's limit of a batch's size."""
VERSION = "2023-06-01"
"""The anthropic-version header litellm's live calls send."""
BASE = "https://api.anthropic.com"
KINDS = ("succeeded", "errored", "canceled", "expired")
"""The result types Anthropic documents."""
PATH = "/v1/messages/batches"
PROVIDER = "anthropic"
"""litellm's name for the provider (its parameter mapping, request and response transformations)."""


class AnthropicBatches:
    """The Message Batches endpoints of one server (``api_base``; None: Anthropic's own) for one model."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None):
        self._litellm = litellm
        self.model = model
        base = api_base or os.environ.get("ANTHROPIC_API_BASE") or os.environ.get("ANTHROPIC_BASE_URL") or BASE
        self._base = base.rstrip("/")
        self._key = api_key
        self._client: Any = None
        self._params: dict[str, dict[str, Any]] = {}

    def _request(self, request: BatchRequest) -> dict[str, Any]:
        if request.key not in self._params:
            sent = encoding.body(self._litellm, PROVIDER, self.model, request.prompt, request.decoding)
            self._params[request.key] = {"custom_id": request.key, "params": sent}
        return self._params[request.key]

    def size(self, request: BatchRequest) -> int:
        return len(json.dumps(self._request(request)).encode())

    def _headers(self) -> dict[str, str]:
        key = (self._key or os.environ.get("ANTHROPIC_API_KEY") or "").strip()
        if not key:
            raise BackendError("--batch with an Anthropic model needs ANTHROPIC_API_KEY (or an api_key)")
        return {"x-api-key": key, "anthropic-version": VERSION, "content-type": "application/json"}

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One HTTP request: the reply's body (JSON for a batch, bytes for results); BackendError else."""
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=TIMEOUT)
        try:
            reply = await self._client.request(method, f"{self._base}{path}", headers=self._headers(), json=body)
        except httpx.HTTPError as exc:
            raise failure(f"{method} {path}", exc) from exc
        if reply.status_code != 200:
            raise BackendError(shown(f"{method} {path}: HTTP {reply.status_code}: {reply.text[:ERROR_CHARS]}", 500))
        if path.endswith("/results"):
            return reply.content
        try:
            found = reply.json()
        except ValueError:
            found = None
        if not isinstance(found, dict) or not isinstance(found.get("id"), str):
            raise BackendError(shown(f"{method} {path}: the reply is not a message batch: {reply.text[:500]!r}", 700))
        return found

    async def create(self, requests: Sequence[BatchRequest]) -> Created:
        body = {"requests": [self._request(r) for r in requests]}
        for r in requests:
            self._params.pop(r.key, None)
        try:
            return Created(state(await self._call("POST", PATH, body)))
        except BackendError as exc:
            raise BackendError(f"could not create a batch: {exc}") from exc

    async def retrieve(self, batch_id: str) -> BatchState:
        return state(await self._call("GET", f"{PATH}/{batch_id}"))

    async def results(self, state: BatchState, price: Pricing) -> Results:
        data = await self._call("GET", f"{PATH}/{state.id}/results")
        out = Results()
        for number, raw in enumerate(bytes(data).splitlines(), 1):
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
            return failed_request(batch_id, f"{kind}: {json.dumps(error) if error else f'the request was {kind}'}")
        message = result.get("message")
        if not isinstance(message, dict):
            raise Unreadable("a succeeded result without a message")
        return encoding.answer(lambda: self._parsed(message), batch_id, price)

    def _parsed(self, message: dict[str, Any]) -> Any:
        """A message as litellm's Anthropic path reads it (a ModelResponse)."""
        import httpx
        from litellm import ModelResponse

        return self._litellm.AnthropicConfig().transform_parsed_response(
            completion_response=message,
            raw_response=httpx.Response(200, json=message),
            model_response=ModelResponse(),
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def state(batch: dict[str, Any]) -> BatchState:
    """A Message Batch as a BatchState (its results are read by batch id)."""
    counts = batch.get("request_counts")
    counts = counts if isinstance(counts, dict) else {}

    def count(name: str) -> int:
        value = counts.get(name, 0)
        return value if isinstance(value, int) else 0

    word = str(batch.get("processing_status"))
    if word == "ended":
        ended = "canceled" if count("canceled") else "expired" if count("expired") else ""
        status = {"canceled": BatchStatus.CANCELLED, "expired": BatchStatus.EXPIRED}.get(ended, BatchStatus.COMPLETED)
    else:
        status = BatchStatus.CANCELLING if word == "canceling" else BatchStatus.RUNNING
    said = "" if word in ("in_progress", "canceling", "ended") else shown(word, 40)
    total = sum(count(k) for k in ("processing", "succeeded", "errored", "canceled", "expired"))
    return BatchState(str(batch["id"]), status, total, count("succeeded"), count("errored"), said=said)
