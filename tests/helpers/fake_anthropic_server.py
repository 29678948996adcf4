"""A FAKE of Anthropic's Messages and Message Batches endpoints on 127.0.0.1, on top of the fault server.

POST /v1/messages answers a live request the way the fault server answers a chat request (its
``schedule``), in Anthropic's message format. POST /v1/messages/batches takes the requests inline
(``{"requests": [{"custom_id", "params"}]}``) and refuses, as Anthropic does, a custom id that is not 1 to
64 letters, digits, ``-`` or ``_``, or that repeats. GET /v1/messages/batches/{id} says `in_progress` until
``delay`` seconds after creation, then answers every request at once (a fault of ``batch_schedule`` or
``schedule`` becomes an `errored` result) and says `ended`; ``outcome`` may make a batch expire, which
leaves the second half of its requests `expired`. POST .../cancel starts a cancel (`canceling`; the next
look ends it with its unanswered requests `canceled`). GET .../results streams the results as JSONL once
the batch ended. Every endpoint wants the ``x-api-key`` and ``anthropic-version`` headers the real one
wants. Every request is logged: tests count what a run sent, by which path, and with which headers.

Faults a real provider shows rarely, each named as a FAKE: ``results_gone`` (results that answer 404, as
a batch past the provider's retention), ``download_faults`` (the first downloads of results answer 500, as
a provider's passing error), ``tamper`` (result lines rewritten: garbage, duplicates, strangers). The body
of every live message request is kept (``message_bodies``): a test sets the batch requests beside them.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from .fake_batch_server import Outcome, always_completed, never
from .fault_server import FaultServer, Request, Schedule

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _iso(when: float | None) -> str | None:
    return datetime.fromtimestamp(when, UTC).isoformat().replace("+00:00", "Z") if when is not None else None


@dataclass
class MessageBatch:
    id: str
    requests: list[dict[str, Any]]
    created: float
    number: int
    status: str = "in_progress"
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    """custom id -> its result, once the batch ended."""
    cancel_initiated: float | None = None
    ended: float | None = None

    def counts(self) -> dict[str, int]:
        kinds = [r["type"] for r in self.results.values()]
        return {
            "processing": len(self.requests) - len(kinds),
            "succeeded": kinds.count("succeeded"),
            "errored": kinds.count("errored"),
            "canceled": kinds.count("canceled"),
            "expired": kinds.count("expired"),
        }

    def body(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": self.counts(),
            "created_at": _iso(self.created),
            "expires_at": _iso(self.created + 86400),
            "cancel_initiated_at": _iso(self.cancel_initiated),
            "ended_at": _iso(self.ended),
            "archived_at": None,
            "results_url": f"{base}/v1/messages/batches/{self.id}/results" if self.status == "ended" else None,
        }


@dataclass
class AnthropicServer(FaultServer):
    """The fault server plus a fake of Anthropic's Messages and Message Batches endpoints."""

    delay: float = 0.0
    """Seconds from a batch's creation until it is answered."""
    outcome: Outcome = always_completed
    """The n-th batch created (from 0) -> `completed` or `expired`."""
    batch_schedule: Schedule | None = None
    results_gone: Callable[[int], bool] = never
    """FAKE fault: the n-th batch's results answer 404 (past the provider's retention)."""
    download_faults: int = 0
    """FAKE fault: this many downloads of results, the first ones, answer HTTP 500."""
    tamper: Callable[[list[str]], list[str]] | None = None
    """FAKE fault: rewrites the result lines (one JSON text a line) before they are served."""
    message_bodies: list[dict[str, Any]] = field(default_factory=list)
    """The body of every live message request, in arrival order."""
    batches: dict[str, MessageBatch] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    """Batch ids in the order they were created."""
    batch_requests: list[str] = field(default_factory=list)
    """Every request to a batches endpoint, as `METHOD path`."""
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    """The headers of every request to any Anthropic endpoint."""
    _ids: Any = field(default_factory=itertools.count)
    _batch_lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base(self) -> str:
        """What --api-base takes (litellm adds /v1/messages itself)."""
        return f"http://127.0.0.1:{self.port}"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._message)
        app.router.add_post("/v1/messages/batches", self._create)
        app.router.add_get("/v1/messages/batches/{id}", self._retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._results)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self._cancel)

    def live_requests(self) -> int:
        """Live message requests received (the path --batch should not take)."""
        return len(self.requests())

    def batch_size(self, batch_id: str) -> int:
        return len(self.batches[batch_id].requests)

    def input_bodies(self) -> list[dict[str, Any]]:
        """The params of every request of every batch, in the order the batches were created."""
        return [r["params"] for b in self.created for r in self.batches[b].requests]

    def _refused(self, request: web.Request) -> web.Response | None:
        self.headers_seen.append(dict(request.headers))
        if not request.headers.get("x-api-key"):
            return _error(401, "authentication_error", "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    async def _message(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        self.message_bodies.append(body)
        prompt = _prompt(body)
        index, attempt = self._next(prompt)
        fault = self.schedule(index, attempt)
        start = time.time()
        status, reply = self._reply(fault.kind, fault.text, body, prompt)
        with self._lock:
            self.log.append(Request(index, attempt, prompt, fault.kind, start, time.time(), status, ""))
        wait = fault.retry_after if fault.kind == "rate-limit" and fault.retry_after is not None else None
        return web.json_response(reply, status=status, headers={"retry-after": str(wait)} if wait else None)

    def _reply(self, kind: str, text: str | None, params: dict[str, Any], prompt: str) -> tuple[int, dict[str, Any]]:
        """(HTTP status, body) of one request, as the Messages endpoint answers it."""
        if kind == "rate-limit":
            return 429, _error_body("rate_limit_error", text or "rate limit reached")
        if kind not in ("ok", "empty"):
            return 500, _error_body("api_error", text or "the server had an error")
        answer = "" if kind == "empty" else (text if text is not None else self.answer)
        return 200, _message(self.reply_model or str(params.get("model", "unknown")), prompt, answer)

    async def _create(self, request: web.Request) -> web.Response:
        self.batch_requests.append("POST /v1/messages/batches")
        refused = self._refused(request)
        if refused is not None:
            return refused
        body = await request.json()
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error(400, "invalid_request_error", "requests: a non-empty list is required")
        ids = [r.get("custom_id") for r in requests]
        bad = [i for i in ids if not isinstance(i, str) or not CUSTOM_ID.match(i)]
        if bad:
            return _error(400, "invalid_request_error", f"custom_id {bad[0]!r}: 1 to 64 of [a-zA-Z0-9_-]")
        if len(set(ids)) != len(ids):
            return _error(400, "invalid_request_error", "custom_id values must be unique within a batch")
        with self._batch_lock:
            batch = MessageBatch(f"msgbatch_{self.port}_{next(self._ids)}", requests, time.time(), len(self.created))
            self.batches[batch.id] = batch
            self.created.append(batch.id)
        return web.json_response(batch.body(self.base))

    def _batch(self, request: web.Request) -> MessageBatch | web.Response:
        """The batch a request names (logged as `METHOD path`), or the error the real endpoint answers."""
        self.batch_requests.append(f"{request.method} {request.path}")
        refused = self._refused(request)
        if refused is not None:
            return refused
        batch = self.batches.get(request.match_info["id"])
        return batch if batch is not None else _error(404, "not_found_error", "no such batch")

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, MessageBatch):
            return batch
        if batch.status == "canceling":
            self._end(batch, cancelled=True)
        elif batch.status == "in_progress" and time.time() - batch.created >= self.delay:
            self._end(batch, cancelled=False)
        return web.json_response(batch.body(self.base))

    async def _cancel(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, MessageBatch):
            return batch
        if batch.status == "in_progress":
            batch.status, batch.cancel_initiated = "canceling", time.time()
        return web.json_response(batch.body(self.base))

    async def _results(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, MessageBatch):
            return batch
        if batch.status != "ended":
            return _error(400, "invalid_request_error", "the batch has not ended: no results yet")
        if self.results_gone(batch.number):
            return _error(404, "not_found_error", f"results of {batch.id} are no longer available")
        if self.download_faults > 0:
            self.download_faults -= 1
            return _error(500, "api_error", "the server had an error")
        lines = [json.dumps({"custom_id": k, "result": r}) for k, r in batch.results.items()]
        lines = self.tamper(lines) if self.tamper is not None else lines
        return web.Response(body="".join(line + "\n" for line in lines).encode(), content_type="application/binary")

    def _end(self, batch: MessageBatch, *, cancelled: bool) -> None:
        """Answer the batch's requests now (none when it was cancelled: they are `canceled`)."""
        expired = not cancelled and self.outcome(batch.number) == "expired"
        answered = len(batch.requests) // 2 if expired else len(batch.requests)
        for n, item in enumerate(batch.requests):
            custom_id = item["custom_id"]
            if cancelled or n >= answered:
                batch.results[custom_id] = {"type": "canceled" if cancelled else "expired"}
                continue
            params = item["params"]
            prompt = _prompt(params)
            index, attempt = self._next(prompt)
            fault = (self.batch_schedule or self.schedule)(index, attempt)
            status, reply = self._reply(fault.kind, fault.text, params, prompt)
            if status == 200:
                batch.results[custom_id] = {"type": "succeeded", "message": reply}
            else:
                batch.results[custom_id] = {"type": "errored", "error": reply}
        batch.status, batch.ended = "ended", time.time()


def _prompt(params: dict[str, Any]) -> str:
    """The text of a request's system prompt and messages, one part a line (its index in the schedule)."""
    parts: list[str] = []
    for block in [*(_blocks(params.get("system"))), *(m.get("content") for m in params.get("messages", []))]:
        parts += _blocks(block)
    return "\n".join(parts)


def _blocks(content: Any) -> list[str]:
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content]
    return [str(content)]


def _message(model: str, prompt: str, text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{hashlib.sha256(prompt.encode()).hexdigest()[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": len(prompt.split()), "output_tokens": len(text.split())},
    }


def _error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error(status: int, kind: str, message: str) -> web.Response:
    return web.json_response(_error_body(kind, message), status=status)
