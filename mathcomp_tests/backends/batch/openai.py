"""OpenAI's Batch API (and an OpenAI-compatible server's Files and Batches endpoints) through the openai
client: upload the requests as one JSONL input file, create a batch on it, look at its status, download its
output and error files.

Each call is one HTTP request (the client's own retries are off): a create is never repeated (a timed-out
create may have made a batch, and a second would pay twice; the batch records make the next run's retry
safe), and a failed status check or download is tried again by the runner at its next check, said in one
line. Each request is the body litellm sends for the same live call (encoding.py) as the openai SDK sends
it; each output line's reply goes through litellm's OpenAI response conversion and the live path's
``as_response`` (encoding.py ``answer``): the Response the live path would have made (text, tokens, finish
reason, the model the reply names), priced at the batch rate. A line that is not a result is one sentence
naming its batch, file and line, and its request counts as unanswered. The batch's input file is kept among
its ``extras`` (``input_file_id``).
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

PROVIDER = "openai"
"""litellm's name for the provider (its parameter mapping, request transformation and reply conversion)."""

ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 200 * 1024 * 1024
"""OpenAI's limit of a batch input file's size."""
STATUS = {
    "validating": BatchStatus.RUNNING,
    "in_progress": BatchStatus.RUNNING,
    "finalizing": BatchStatus.RUNNING,
    "cancelling": BatchStatus.CANCELLING,
    "completed": BatchStatus.COMPLETED,
    "expired": BatchStatus.EXPIRED,
    "cancelled": BatchStatus.CANCELLED,
    "failed": BatchStatus.FAILED,
}
"""OpenAI's batch statuses; one it does not document yet reads as running (said in the progress line)."""


class OpenAIBatches:
    """OpenAI's batch endpoints on one server (``api_base``; None: OpenAI's own) for one model."""

    max_requests = MAX_REQUESTS
    max_bytes = MAX_BYTES

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None):
        self._litellm = litellm
        self.model = model
        self._base = api_base
        self._key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client: Any = None
        self._lines: dict[str, bytes] = {}

    def _line(self, request: BatchRequest) -> bytes:
        if request.key not in self._lines:
            sent = encoding.body(self._litellm, PROVIDER, self.model, request.prompt, request.decoding)
            line = {"custom_id": request.key, "method": "POST", "url": ENDPOINT, "body": sdk_body(sent)}
            self._lines[request.key] = (json.dumps(line, sort_keys=True) + "\n").encode()
        return self._lines[request.key]

    def size(self, request: BatchRequest) -> int:
        return len(self._line(request))

    def _openai(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._key, base_url=self._base, max_retries=0, timeout=TIMEOUT
            )
        return self._client

    async def create(self, requests: Sequence[BatchRequest]) -> Created:
        data = b"".join(self._line(r) for r in requests)
        for r in requests:
            self._lines.pop(r.key, None)
        try:
            uploaded = await self._openai().files.create(file=("mathcomp-batch.jsonl", data), purpose="batch")
            batch = await self._openai().batches.create(
                completion_window="24h", endpoint=ENDPOINT, input_file_id=uploaded.id
            )
        except Exception as exc:  # the openai client's errors: the backend's outside
            raise failure("could not create a batch", exc) from exc
        return Created(_state(batch), {"input_file_id": str(uploaded.id)})

    async def retrieve(self, batch_id: str) -> BatchState:
        """Through the openai client: litellm's ``aretrieve_batch`` downloads a completed batch's output and
        error files again in the background for its cost tracking (up to 200 MB each)."""
        try:
            return _state(await self._openai().batches.retrieve(batch_id))
        except Exception as exc:
            raise failure(f"status of batch {batch_id}", exc) from exc

    async def results(self, state: BatchState, price: Pricing) -> Results:
        got = Results()
        for what, file_id in state.results:
            try:
                data = (await self._openai().files.content(file_id)).content
            except Exception as exc:
                raise failure(f"{what} {file_id}", exc) from exc
            read_lines(bytes(data), f"batch {state.id}: {what}", state.id, price, got)
        return got

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _state(batch: Any) -> BatchState:
    """A batch object of the openai client as a BatchState; BackendError for a reply that is no batch."""
    batch_id, status = getattr(batch, "id", None), getattr(batch, "status", None)
    if not isinstance(batch_id, str) or not batch_id or not isinstance(status, str):
        raise BackendError(f"the reply is not a batch (no id and status): {shown(batch, 300)!r}")
    counts = getattr(batch, "request_counts", None)

    def count(name: str) -> int:
        value = getattr(counts, name, 0)
        return value if isinstance(value, int) else 0

    files = [(what, getattr(batch, f"{what.split()[0]}_file_id", None)) for what in ("output file", "error file")]
    return BatchState(
        batch_id,
        STATUS.get(status, BatchStatus.RUNNING),
        count("total"),
        count("completed"),
        count("failed"),
        said=shown(status, 40) if status in ("validating", "finalizing") or status not in STATUS else "",
        errors=_errors(getattr(batch, "errors", None)),
        results=tuple((what, str(f)) for what, f in files if isinstance(f, str) and f),
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
        return failed_request(batch_id, f"HTTP {status}: {json.dumps(error or body.get('error') or body)}")
    choices = body.get("choices") or []
    if not isinstance(choices, list):
        raise Unreadable("response.body.choices is not a list")
    if not choices:
        return failed_request(batch_id, "the provider returned no choices")
    return encoding.answer(lambda: parsed(body), batch_id, price)


def parsed(body: dict[str, Any]) -> Any:
    """A chat completion body as litellm's OpenAI path reads the openai SDK's reply (a ModelResponse)."""
    from litellm import ModelResponse
    from litellm.utils import convert_to_model_response_object

    return convert_to_model_response_object(response_object=body, model_response_object=ModelResponse())


def sdk_body(sent: dict[str, Any]) -> dict[str, Any]:
    """What the openai SDK sends of litellm's request: ``extra_body`` merged in, ``stream: false`` left out."""
    out = dict(sent)
    extra = out.pop("extra_body", None) or {}
    if out.get("stream") is False:
        del out["stream"]
    out.update(extra)
    return out
