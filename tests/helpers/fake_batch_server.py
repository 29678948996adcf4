"""A FAKE of OpenAI's Files and Batches endpoints on 127.0.0.1, on top of the fault server's chat endpoint.

POST /v1/files takes a batch input file (JSONL, one chat request a line); POST /v1/batches starts a batch
on it; GET /v1/batches/{id} says `in_progress` until ``delay`` seconds after creation, then answers every
request at once the way the fault server answers a chat request (its ``schedule``: a fault becomes a
failed request in the error file), and says `completed` (or what ``outcome`` says for that batch:
`expired` answers the first half of its requests and expires the rest; `failed` answers none and names
``failure`` in the batch's `errors`, as a batch whose input file did not validate). GET
/v1/files/{id}/content returns an input, output or error file; POST /v1/batches/{id}/cancel cancels. Every
batch created and every chat request (the live path) is logged, so tests count what a run sent and by
which path.

Faults a real provider shows rarely, each named as a FAKE: ``output_gone`` (an output file that answers
404, as one deleted or expired), ``download_faults`` (the first downloads of an output or error file answer
500, as a provider's passing error), ``tamper`` (output lines rewritten: garbage, duplicates, strangers).
The body of every live chat request is kept (``chat_bodies``): a test sets the batch requests beside them.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .fault_server import FaultServer, Schedule, _completion

Outcome = Callable[[int], str]
"""The n-th batch created (from 0) -> `completed` or `expired`."""


def always_completed(number: int) -> str:
    return "completed"


def never(number: int) -> bool:
    return False


@dataclass
class Batch:
    id: str
    input_file_id: str
    endpoint: str
    created: float
    number: int
    status: str = "in_progress"
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed: int = 0
    failed: int = 0
    total: int = 0
    ended: float | None = None
    errors: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        when = int(self.ended) if self.ended is not None else None
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": self.errors,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": int(self.created),
            "in_progress_at": int(self.created),
            "expires_at": int(self.created) + 86400,
            "completed_at": when if self.status == "completed" else None,
            "expired_at": when if self.status == "expired" else None,
            "failed_at": when if self.status == "failed" else None,
            "cancelled_at": when if self.status == "cancelled" else None,
            "request_counts": {"total": self.total, "completed": self.completed, "failed": self.failed},
            "metadata": None,
        }


@dataclass
class BatchServer(FaultServer):
    """The fault server plus a fake of the Files and Batches endpoints (see the module's docstring)."""

    delay: float = 0.0
    """Seconds from a batch's creation until it is answered."""
    outcome: Outcome = always_completed
    batch_schedule: Schedule | None = None
    """How batch requests are answered (None: like chat requests, by ``schedule``): a provider's batches
    run outside its live rate limits."""
    failure: str = "Model 'gpt-4o-mini' is not available for batches on this project."
    """The message of a failed batch's `errors` (``outcome`` says `failed`)."""
    output_gone: Callable[[int], bool] = never
    """FAKE fault: the n-th batch's output file answers 404 (deleted, or past the provider's retention)."""
    download_faults: int = 0
    """FAKE fault: this many downloads of an output or error file, the first ones, answer HTTP 500."""
    tamper: Callable[[list[str]], list[str]] | None = None
    """FAKE fault: rewrites an output file's lines (one JSON text a line) before it is stored."""
    chat_bodies: list[dict[str, Any]] = field(default_factory=list)
    """The body of every live chat request, in arrival order."""
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, Batch] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    """Batch ids in the order they were created."""
    batch_requests: list[str] = field(default_factory=list)
    """Every request to a files or batches endpoint, as `METHOD path`."""
    _ids: Any = field(default_factory=itertools.count)
    _batch_lock: threading.Lock = field(default_factory=threading.Lock)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{id}", self._retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.chat_bodies.append(await request.json())
        return await super()._chat(request)

    def input_bodies(self) -> list[dict[str, Any]]:
        """The body of every request of every batch input file, in the order the batches were created."""
        lines = [line for b in self.created for line in self.files[self.batches[b].input_file_id].splitlines()]
        return [json.loads(line)["body"] for line in lines if line.strip()]

    def chat_requests(self) -> int:
        """Live chat completion requests received (the path --batch should not take)."""
        return len(self.requests())

    def batch_prompts(self, batch_id: str) -> int:
        """Requests held by a batch's input file."""
        batch = self.batches[batch_id]
        return len(self.files[batch.input_file_id].splitlines())

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-{self.port}-{next(self._ids)}"

    def _file_body(self, file_id: str, purpose: str) -> dict[str, Any]:
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(self.files[file_id]),
            "created_at": int(time.time()),
            "filename": f"{file_id}.jsonl",
            "purpose": purpose,
            "status": "processed",
        }

    async def _upload(self, request: web.Request) -> web.Response:
        self.batch_requests.append("POST /v1/files")
        form = await request.post()
        upload = form.get("file")
        data = upload.file.read() if isinstance(upload, web.FileField) else str(upload or "").encode()
        with self._batch_lock:
            file_id = self._new_id("file")
            self.files[file_id] = data
        return web.json_response(self._file_body(file_id, str(form.get("purpose", "batch"))))

    async def _file(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        return web.json_response(self._file_body(file_id, "batch"))

    async def _content(self, request: web.Request) -> web.Response:
        self.batch_requests.append(f"GET /v1/files/{request.match_info['id']}/content")
        data = self.files.get(request.match_info["id"])
        gone = {b.output_file_id for b in self.batches.values() if self.output_gone(b.number)}
        if data is None or request.match_info["id"] in gone:
            return web.json_response({"error": {"message": "no such file"}}, status=404)
        inputs = {b.input_file_id for b in self.batches.values()}
        if self.download_faults > 0 and request.match_info["id"] not in inputs:
            self.download_faults -= 1
            return web.json_response({"error": {"message": "the server had an error"}}, status=500)
        return web.Response(body=data, content_type="application/octet-stream")

    async def _create(self, request: web.Request) -> web.Response:
        self.batch_requests.append("POST /v1/batches")
        body = await request.json()
        if body.get("input_file_id") not in self.files:
            return web.json_response({"error": {"message": "no such input file"}}, status=400)
        with self._batch_lock:
            batch = Batch(
                self._new_id("batch"), body["input_file_id"], body.get("endpoint", ""), time.time(), len(self.created)
            )
            batch.total = len(self.files[batch.input_file_id].splitlines())
            self.batches[batch.id] = batch
            self.created.append(batch.id)
        return web.json_response(batch.body())

    async def _retrieve(self, request: web.Request) -> web.Response:
        self.batch_requests.append(f"GET /v1/batches/{request.match_info['id']}")
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        if batch.status == "in_progress" and time.time() - batch.created >= self.delay:
            self._finish(batch)
        return web.json_response(batch.body())

    async def _cancel(self, request: web.Request) -> web.Response:
        self.batch_requests.append(f"POST /v1/batches/{request.match_info['id']}/cancel")
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response({"error": {"message": "no such batch"}}, status=404)
        if batch.status == "in_progress":
            batch.status, batch.ended = "cancelled", time.time()
        return web.json_response(batch.body())

    def _finish(self, batch: Batch) -> None:
        """Answer every request of the batch now, as the chat endpoint would (faults from the schedule)."""
        lines = [json.loads(line) for line in self.files[batch.input_file_id].splitlines() if line.strip()]
        outcome = self.outcome(batch.number)
        if outcome == "failed":
            error = {"code": "invalid_request", "message": self.failure, "param": "body.model", "line": 1}
            batch.errors = {"object": "list", "data": [error]}
            batch.status, batch.ended = "failed", time.time()
            return
        expired = outcome == "expired"
        answered = lines[: len(lines) // 2] if expired else lines
        out, errors = [], []
        for n, line in enumerate(lines):
            custom_id = line["custom_id"]
            if n >= len(answered):
                error = {"code": "batch_expired", "message": "This request could not be executed before the "
                         "completion window expired."}
                errors.append({"id": f"req-{n}", "custom_id": custom_id, "response": None, "error": error})
                continue
            body = line["body"]
            prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
            index, attempt = self._next(prompt)
            fault = (self.batch_schedule or self.schedule)(index, attempt)
            if fault.kind in ("ok", "empty"):
                text = "" if fault.kind == "empty" else (fault.text if fault.text is not None else self.answer)
                reply = _completion(self.reply_model or body.get("model", "unknown"), prompt, text)
                response = {"status_code": 200, "request_id": f"req-{n}", "body": reply}
                out.append({"id": f"req-{n}", "custom_id": custom_id, "response": response, "error": None})
            else:
                status = 429 if fault.kind == "rate-limit" else 500
                message = fault.text or "the server had an error"
                response = {"status_code": status, "request_id": f"req-{n}",
                            "body": {"error": {"message": message, "type": "server_error"}}}
                errors.append({"id": f"req-{n}", "custom_id": custom_id, "response": response, "error": None})
        with self._batch_lock:
            if out:
                batch.output_file_id = self._new_id("file")
                written = [json.dumps(o) for o in out]
                written = self.tamper(written) if self.tamper is not None else written
                self.files[batch.output_file_id] = "".join(line + "\n" for line in written).encode()
            if errors:
                batch.error_file_id = self._new_id("file")
                self.files[batch.error_file_id] = "".join(json.dumps(e) + "\n" for e in errors).encode()
        batch.completed, batch.failed = len(out), len(errors)
        batch.status, batch.ended = ("expired" if expired else "completed"), time.time()
