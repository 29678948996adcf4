"""FakeCo's batch API: a FAKE provider that exists only in the tests, served by helpers/fakeco_server.py.

It is what a new batch provider is: this one module, and one line in ``PROVIDERS``
(mathcomp_tests/backends/batch/__init__.py), which the tests add with monkeypatch (``REGISTRY_LINE``).
Nothing else in backends/batch/ knows it. FakeCo takes OpenAI-style chat requests inline (one job: ``POST
/fakeco/jobs``), says a job's ``phase`` in its own words and gives its answers as JSON lines; a request is
the body litellm sends for the same live call (``encoding.body``), a reply goes through litellm's OpenAI
response conversion and the live path's reading (``encoding.answer``). A job's ``receipt`` is its extra.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from mathcomp_tests.backends.base import BackendError
from mathcomp_tests.backends.batch import encoding
from mathcomp_tests.backends.batch.pricing import Pricing
from mathcomp_tests.backends.batch.protocol import (
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
from mathcomp_tests.types import Response

NAME = "fakeco"
"""The provider's name: models are `fakeco/<name>`."""
REGISTRY_LINE = (NAME, "helpers.fakeco_batches:FakeCoBatches")
"""The one entry of ``PROVIDERS`` that registers FakeCo."""
PHASES = {
    "running": BatchStatus.RUNNING,
    "done": BatchStatus.COMPLETED,
    "timed_out": BatchStatus.EXPIRED,
    "stopped": BatchStatus.CANCELLED,
    "rejected": BatchStatus.FAILED,
}
JOBS = "/fakeco/jobs"


class FakeCoBatches:
    """FakeCo's jobs on one server for one model (a FAKE provider: see the module's docstring)."""

    max_requests = 1000
    max_bytes = 10 * 1024 * 1024

    def __init__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None):
        self._litellm = litellm
        self.model = model
        self._base = (api_base or "http://127.0.0.1:9").rstrip("/")
        self._key = api_key or os.environ.get("FAKECO_API_KEY", "")
        self._client: Any = None
        self._requests: dict[str, dict[str, Any]] = {}

    def _request(self, request: BatchRequest) -> dict[str, Any]:
        if request.key not in self._requests:
            chat = encoding.body(self._litellm, "openai", self.model, request.prompt, request.decoding)
            self._requests[request.key] = {"id": request.key, "chat": chat}
        return self._requests[request.key]

    def size(self, request: BatchRequest) -> int:
        return len(json.dumps(self._request(request)).encode())

    async def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One HTTP request: its body (a job, or the answers' bytes); BackendError else."""
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=TIMEOUT)
        try:
            reply = await self._client.request(
                method, f"{self._base}{path}", headers={"fakeco-key": self._key}, json=body
            )
        except httpx.HTTPError as exc:
            raise failure(f"{method} {path}", exc) from exc
        if reply.status_code != 200:
            raise BackendError(shown(f"{method} {path}: HTTP {reply.status_code}: {reply.text[:300]}", 500))
        return reply.content if path.endswith("/answers") else reply.json()

    async def create(self, requests: Sequence[BatchRequest]) -> Created:
        job = await self._call("POST", JOBS, {"requests": [self._request(r) for r in requests]})
        for r in requests:
            self._requests.pop(r.key, None)
        return Created(_state(job), {"receipt": str(job["receipt"])})

    async def retrieve(self, batch_id: str) -> BatchState:
        return _state(await self._call("GET", f"{JOBS}/{batch_id}"))

    async def results(self, state: BatchState, price: Pricing) -> Results:
        data = await self._call("GET", f"{JOBS}/{state.id}/answers")
        out = Results()
        for number, raw in enumerate(bytes(data).splitlines(), 1):
            at = f"batch {state.id}: answers line {number}"
            try:
                line = json.loads(raw)
                if not isinstance(line, dict) or not isinstance(line.get("id"), str):
                    raise Unreadable("no id")
                out.found.append(Result(line["id"], self._response(line, state.id, price), at))
            except ValueError as exc:  # not JSON, or Unreadable
                out.unreadable.append(unreadable(at, f"not an answer ({shown(exc, 100)})"))
        return out

    def _response(self, line: dict[str, Any], batch_id: str, price: Pricing) -> Response:
        if line.get("ok") is not True:
            return failed_request(batch_id, str(line.get("problem")))
        reply = line.get("reply")
        if not isinstance(reply, dict):
            raise Unreadable("an answer without a reply")
        return encoding.answer(lambda: self._parsed(reply), batch_id, price)

    def _parsed(self, reply: dict[str, Any]) -> Any:
        from litellm import ModelResponse
        from litellm.utils import convert_to_model_response_object

        return convert_to_model_response_object(response_object=reply, model_response_object=ModelResponse())

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _state(job: Any) -> BatchState:
    if not isinstance(job, dict) or not isinstance(job.get("job"), str) or job.get("phase") not in PHASES:
        raise BackendError(f"the reply is not a FakeCo job: {shown(job, 300)!r}")
    counts = job.get("counts") or {}
    return BatchState(
        job["job"],
        PHASES[job["phase"]],
        int(counts.get("all", 0)),
        int(counts.get("ok", 0)),
        int(counts.get("failed", 0)),
        errors=shown(job.get("why") or "", 500),
    )
