"""A provider's batch API as the batch run sees it (``BatchAPI``), and OpenAI's: upload an input file,
create a batch and read its output and error files through litellm, look at its status through the openai
client. The requests are the chat requests the live path sends, one JSONL line each, whose custom id is the
answer's cache key; each output line becomes the Response the live path would have made (text, tokens,
finish reason, the model the reply names), priced at the batch rate. Anthropic's Message Batches:
batch_anthropic.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..types import Decoding, Prompt, Response
from .base import BackendError, redact

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 200 * 1024 * 1024
"""OpenAI's limit of a batch input file's size."""
DONE = frozenset({"completed", "expired", "cancelled", "failed"})
"""Statuses after which a batch changes no more."""
HALF = 0.5
"""The share of the live price a batch answer costs where litellm's price map has no batch price."""
_ERROR_CHARS = 2000


@dataclass(frozen=True)
class BatchState:
    """What the provider says of one batch."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def done(self) -> bool:
        return self.status in DONE

    def line(self) -> str:
        """The progress line: status and counts."""
        return f"batch {self.id}: {self.status}, {self.completed} of {self.total} answered, {self.failed} failed"


class BatchAPI(Protocol):
    """One provider's batch endpoints for one model and server."""

    model: str
    """The model the requests name (the litellm string less its provider prefix)."""
    max_requests: int
    """Requests one batch may hold."""
    max_bytes: int
    """Bytes one batch's requests may take."""

    def line(self, key: str, prompt: Prompt, decoding: Decoding) -> bytes:
        """One request as a JSONL line whose custom id is ``key``."""
        ...

    async def create(self, data: bytes) -> tuple[str, BatchState]:
        """A batch of the JSONL lines in ``data``: (its input file id, or "" where there is none; the batch)."""
        ...

    async def retrieve(self, batch_id: str) -> BatchState: ...

    async def answers(self, state: BatchState, price: Pricing) -> list[tuple[str, Response]]:
        """A finished batch's requests as (cache key, Response): an answer priced at the batch rate, or a
        failed request (``error`` set). A request it does not list was not answered."""
        ...

    async def close(self) -> None:
        """Close what the calls opened (before the backend's event loop closes)."""
        ...


def request_line(key: str, model: str, prompt: Prompt, decoding: Decoding) -> bytes:
    """One request of an input file: the body the live path sends (backends/api.py), custom id = cache key."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in prompt.messages],
        "temperature": decoding.temperature,
        "max_tokens": decoding.max_new_tokens,
    }
    if decoding.seed is not None:
        body["seed"] = decoding.seed
    line = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}
    return (json.dumps(line, sort_keys=True) + "\n").encode()


def split(lines: Sequence[bytes], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list[list[int]]:
    """The indexes of ``lines`` cut into as few input files as the limits allow, in order."""
    out: list[list[int]] = []
    size = 0
    for n, line in enumerate(lines):
        if not out or len(out[-1]) >= max_requests or size + len(line) > max_bytes:
            out.append([])
            size = 0
        out[-1].append(n)
        size += len(line)
    return out


class OpenAIBatches:
    """OpenAI's batch endpoints on one server (``api_base``; None: OpenAI's own)."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None):
        self._litellm = litellm
        self.model = model
        self._params: dict[str, Any] = {"custom_llm_provider": "openai", "api_key": api_key}
        if api_base:
            self._params["api_base"] = api_base
        self._client: Any = None

    def line(self, key: str, prompt: Prompt, decoding: Decoding) -> bytes:
        return request_line(key, self.model, prompt, decoding)

    async def create(self, data: bytes) -> tuple[str, BatchState]:
        """Upload ``data`` as an input file and start a batch on it: (input file id, batch)."""
        try:
            uploaded = await self._litellm.acreate_file(
                file=("mathcomp-batch.jsonl", data), purpose="batch", **self._params
            )
            batch = await self._litellm.acreate_batch(
                completion_window="24h", endpoint=ENDPOINT, input_file_id=uploaded.id, **self._params
            )
        except Exception as exc:
            raise BackendError(redact(f"could not create a batch: {type(exc).__name__}: {exc}")[:_ERROR_CHARS]) from exc
        return str(uploaded.id), _state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        """Through the openai client litellm itself uses: litellm's ``aretrieve_batch`` downloads a completed
        batch's output and error files again in the background for its cost tracking (up to 200 MB each,
        and a never-awaited coroutine when the run ends first)."""
        if self._client is None:
            import openai

            key = self._params.get("api_key") or os.environ.get("OPENAI_API_KEY") or "none"
            self._client = openai.AsyncOpenAI(api_key=key, base_url=self._params.get("api_base"))
        return _state(await self._client.batches.retrieve(batch_id))

    async def content(self, file_id: str) -> bytes:
        import asyncio

        got = await asyncio.to_thread(self._litellm.file_content, file_id=file_id, **self._params)
        return bytes(got.content)

    async def answers(self, state: BatchState, price: Pricing) -> list[tuple[str, Response]]:
        got: list[tuple[str, Response]] = []
        for file_id in (state.output_file_id, state.error_file_id):
            if file_id:
                got += read_lines(await self.content(file_id), state.id, price)
        return got

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _state(batch: Any) -> BatchState:
    counts = getattr(batch, "request_counts", None)
    return BatchState(
        str(batch.id),
        str(batch.status),
        int(getattr(counts, "total", 0) or 0),
        int(getattr(counts, "completed", 0) or 0),
        int(getattr(counts, "failed", 0) or 0),
        getattr(batch, "output_file_id", None),
        getattr(batch, "error_file_id", None),
    )


def read_lines(data: bytes, batch_id: str, price: Pricing) -> list[tuple[str, Response]]:
    """Each line of an output or error file as (cache key, Response): an answer, or a failed request."""
    out = []
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            key = str(line["custom_id"])
        except (ValueError, KeyError, TypeError):
            continue
        out.append((key, _response(line, batch_id, price)))
    return out


def _response(line: dict[str, Any], batch_id: str, price: Pricing) -> Response:
    reply = line.get("response") or {}
    error = line.get("error")
    status = reply.get("status_code")
    body = reply.get("body") or {}
    if error or status != 200:
        detail = error or body.get("error") or body
        return Response(text="", error=redact(f"batch {batch_id}: HTTP {status}: {json.dumps(detail)}")[:_ERROR_CHARS])
    choices = body.get("choices") or []
    if not choices:
        return Response(text="", error=f"batch {batch_id}: the provider returned no choices")
    usage = body.get("usage") or {}
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    meta: dict[str, object] = {"finish_reason": choices[0].get("finish_reason"), "batch": batch_id}
    if isinstance(body.get("model"), str) and body["model"]:
        meta["served_model"] = body["model"]
    message = choices[0].get("message") or {}
    text = str(message.get("content") or "")
    return priced(Response(text, input_tokens=tokens_in, output_tokens=tokens_out, meta=meta), price)


def priced(response: Response, price: Pricing) -> Response:
    """``response`` with its batch cost and what it would have cost live in its meta (where known)."""
    costs = price.costs(response.input_tokens, response.output_tokens)
    if costs is not None:
        response.meta["cost"], response.meta["live_cost"] = costs
    return response


class Pricing:
    """A batch answer's price: litellm's batch prices for the model where its map has them, else half the
    live price (OpenAI and Anthropic both bill batches at half); None where no price is known."""

    def __init__(self, litellm: Any, model: str):
        self.entry: dict[str, Any] = {}
        for name in (model, model.split("/", 1)[-1]):
            found = litellm.model_cost.get(name)
            if isinstance(found, dict):
                self.entry = found
                break

    @property
    def source(self) -> str:
        """How batch answers are priced, for the report."""
        if not self.entry.get("input_cost_per_token"):
            return "unknown (the model is not in litellm's price map)"
        if self.entry.get("input_cost_per_token_batches"):
            return "litellm's batch prices"
        return "half the live price (litellm has no batch price for the model)"

    def costs(self, tokens_in: object, tokens_out: object) -> tuple[float, float] | None:
        """(batch cost, live cost) in USD, or None."""
        live_in, live_out = self.entry.get("input_cost_per_token"), self.entry.get("output_cost_per_token")
        if not isinstance(live_in, (int, float)) or not isinstance(live_out, (int, float)):
            return None
        n_in = tokens_in if isinstance(tokens_in, int) else 0
        n_out = tokens_out if isinstance(tokens_out, int) else 0
        live = n_in * live_in + n_out * live_out
        batch_in = self.entry.get("input_cost_per_token_batches")
        batch_out = self.entry.get("output_cost_per_token_batches")
        if isinstance(batch_in, (int, float)) and isinstance(batch_out, (int, float)):
            return n_in * batch_in + n_out * batch_out, live
        return live * HALF, live
