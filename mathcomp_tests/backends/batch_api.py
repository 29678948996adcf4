"""A provider's batch API as the batch run sees it (``BatchAPI``), and OpenAI's: upload an input file,
create a batch and read its output and error files through litellm, look at its status through the openai
client. The requests are the chat requests the live path sends, one JSONL line each, whose custom id is the
answer's cache key; each output line becomes the Response the live path would have made (text, tokens,
finish reason, the model the reply names), priced at the batch rate. A line that is not a result (not
JSON, or not the shape the provider documents) is kept as one sentence naming its file and line, never
dropped silently: its request counts as unanswered. Anthropic's Message Batches: batch_anthropic.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..printable import printable
from ..types import Decoding, Prompt, Response
from .base import ERROR_CHARS, BackendError
from .secrets import redact

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 200 * 1024 * 1024
"""OpenAI's limit of a batch input file's size."""
DONE = frozenset({"completed", "expired", "cancelled", "failed"})
"""Statuses after which a batch changes no more."""
HALF = 0.5
"""The share of the live price a batch answer costs where litellm's price map has no batch price."""


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
    errors: str = ""
    """Why the provider failed the batch as a whole, in its words (redacted, printable); "" where it said nothing."""

    @property
    def done(self) -> bool:
        return self.status in DONE

    def line(self) -> str:
        """The progress line: status and counts."""
        return f"batch {self.id}: {self.status}, {self.completed} of {self.total} answered, {self.failed} failed"


@dataclass(frozen=True)
class Result:
    """One result line of a batch: its custom id (the cache key), the Response, and where it was read."""

    key: str
    response: Response
    where: str
    """`output file line 3`: the file and line, for the lines that speak of it."""


@dataclass
class Results:
    """What a finished batch's output holds: its results in order, and a sentence per line that is none."""

    found: list[Result] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


class Unreadable(ValueError):
    """A result line that is not the shape the provider documents."""


def shown(text: object, limit: int = 300) -> str:
    """Provider text fit for a progress line: secrets redacted, control characters escaped, bounded."""
    return printable(redact(str(text)))[:limit]


def failure(what: str, exc: BaseException) -> BackendError:
    """An error raised at the provider boundary (litellm's, openai's, httpx's own types) as the backend's
    error: what was asked, the HTTP status where the error carries one, the error itself, redacted."""
    status = getattr(exc, "status_code", None)
    http = f"HTTP {status}: " if isinstance(status, int) else ""
    return BackendError(shown(f"{what}: {http}{type(exc).__name__}: {exc}", 500))


def unreadable(where: str, problem: str) -> str:
    """The sentence said for a line that is not a result."""
    return f"{where}: {problem}; the request it answers counts as unanswered"


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

    async def answers(self, state: BatchState, price: Pricing) -> Results:
        """A finished batch's results: an answer priced at the batch rate, or a failed request (``error``
        set); a request it does not list was not answered. BackendError where the output cannot be read."""
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
            raise BackendError(redact(f"could not create a batch: {type(exc).__name__}: {exc}")[:ERROR_CHARS]) from exc
        return str(uploaded.id), _state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        """Through the openai client litellm itself uses: litellm's ``aretrieve_batch`` downloads a completed
        batch's output and error files again in the background for its cost tracking (up to 200 MB each,
        and a never-awaited coroutine when the run ends first)."""
        if self._client is None:
            import openai

            key = self._params.get("api_key") or os.environ.get("OPENAI_API_KEY") or "none"
            self._client = openai.AsyncOpenAI(api_key=key, base_url=self._params.get("api_base"))
        try:
            return _state(await self._client.batches.retrieve(batch_id))
        except Exception as exc:  # the openai client's errors, or a reply that is not a batch
            raise failure(f"status of batch {batch_id}", exc) from exc

    async def content(self, file_id: str) -> bytes:
        """A file's bytes; BackendError where the provider cannot give it (gone, refused, unreachable)."""
        import asyncio

        try:
            got = await asyncio.to_thread(self._litellm.file_content, file_id=file_id, **self._params)
            return bytes(got.content)
        except Exception as exc:  # litellm and openai raise their own types: the backend's error outside
            raise failure(f"file {file_id}", exc) from exc

    async def answers(self, state: BatchState, price: Pricing) -> Results:
        got = Results()
        for name, file_id in (("output file", state.output_file_id), ("error file", state.error_file_id)):
            if file_id:
                read_lines(await self.content(file_id), f"batch {state.id}: {name}", state.id, price, got)
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
        _errors(getattr(batch, "errors", None)),
    )


def _errors(errors: Any) -> str:
    """A batch's `errors` ({"data": [{code, message, line, param}]}) as one printable sentence."""
    data = getattr(errors, "data", None) if not isinstance(errors, dict) else errors.get("data")
    parts = []
    for error in data if isinstance(data, list) else []:
        def get(name: str, error: Any = error) -> Any:
            return error.get(name) if isinstance(error, dict) else getattr(error, name, None)

        where = f" (input line {get('line')})" if get("line") is not None else ""
        parts.append(f"{get('code') or 'error'}: {get('message') or ''}{where}".strip())
    return shown("; ".join(parts), 500)


def read_lines(data: bytes, where: str, batch_id: str, price: Pricing, into: Results) -> None:
    """Each line of an output or error file into ``into``: a result (an answer, or a failed request), or
    the sentence that says why the line is none."""
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        at = f"{where} line {number}"
        try:
            line = json.loads(raw)
        except ValueError:
            into.unreadable.append(unreadable(at, "not JSON, expected one JSON result a line"))
            continue
        try:
            if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                raise Unreadable("no custom_id")
            into.found.append(Result(line["custom_id"], _response(line, batch_id, price), at))
        except Unreadable as exc:
            expected = "custom_id and a response {status_code, body} or an error"
            into.unreadable.append(unreadable(at, f"not a batch result ({exc}), expected {expected}"))


def _dict(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Unreadable(f"{what} is not an object")
    return value


def _response(line: dict[str, Any], batch_id: str, price: Pricing) -> Response:
    reply = _dict(line.get("response"), "response")
    error = line.get("error")
    status = reply.get("status_code")
    body = _dict(reply.get("body"), "response.body")
    if error or status != 200:
        if not error and not isinstance(status, int):
            raise Unreadable("neither a status_code nor an error")
        detail = error or body.get("error") or body
        return Response(text="", error=redact(f"batch {batch_id}: HTTP {status}: {json.dumps(detail)}")[:ERROR_CHARS])
    choices = body.get("choices") or []
    if not isinstance(choices, list):
        raise Unreadable("response.body.choices is not a list")
    if not choices:
        return Response(text="", error=f"batch {batch_id}: the provider returned no choices")
    choice = _dict(choices[0], "the first choice")
    usage = _dict(body.get("usage"), "response.body.usage")
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not all(t is None or (isinstance(t, int) and not isinstance(t, bool)) for t in (tokens_in, tokens_out)):
        raise Unreadable("a token count is not a number")
    meta: dict[str, object] = {"finish_reason": choice.get("finish_reason"), "batch": batch_id}
    if isinstance(body.get("model"), str) and body["model"]:
        meta["served_model"] = body["model"]
    content = _dict(choice.get("message"), "the message").get("content")
    if content is not None and not isinstance(content, str):
        raise Unreadable("the message's content is not text")
    return priced(Response(content or "", input_tokens=tokens_in, output_tokens=tokens_out, meta=meta), price)


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
