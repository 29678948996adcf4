"""A FAKE of FakeCo's batch endpoints on 127.0.0.1: FakeCo is a FAKE provider that exists only in the tests
(its provider module: helpers/fakeco_batches.py), with words of its own, so that the batch contract runs
against a third provider the package does not know.

POST /fakeco/jobs takes the requests inline (``{"requests": [{"id", "chat"}]}``, each chat an OpenAI-style
chat body) and answers the job with a ``receipt``; GET /fakeco/jobs/{id} says the job's ``phase``
(`running`, then `done`, `timed_out`, `stopped` or `rejected`) and its ``counts``; POST .../stop stops it;
GET .../answers gives one JSON line per request (``{"id", "ok": true, "reply"}`` with a chat completion,
or ``{"id", "ok": false, "problem"}``) once the job ended. Every endpoint wants a ``fakeco-key`` header.
Underneath it is the OpenAI fake (helpers/fake_batch_server.py): the same ``delay``, ``schedule``,
``outcome``, ``download_faults`` and ``tamper`` (on the chat completion lines, before they are put in
FakeCo's words), and the same logs (``created``, ``batch_requests``, ``input_bodies``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .fake_batch_server import Batch, BatchServer

PHASES = {
    "in_progress": "running",
    "completed": "done",
    "expired": "timed_out",
    "cancelled": "stopped",
    "failed": "rejected",
}
"""The OpenAI fake's batch status -> FakeCo's phase."""


@dataclass
class FakeCoServer(BatchServer):
    """The OpenAI fake behind FakeCo's own endpoints and words (see the module's docstring)."""

    @property
    def base(self) -> str:
        """What the FakeCo provider takes as its api_base."""
        return f"http://127.0.0.1:{self.port}"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/fakeco/jobs", self._submit)
        app.router.add_get("/fakeco/jobs/{id}", self._job)
        app.router.add_post("/fakeco/jobs/{id}/stop", self._stop)
        app.router.add_get("/fakeco/jobs/{id}/answers", self._answers)

    def _refused(self, request: web.Request) -> web.Response | None:
        self.batch_requests.append(f"{request.method} {request.path}")
        if not request.headers.get("fakeco-key"):
            return web.json_response({"problem": "no fakeco-key header"}, status=401)
        return None

    def _body(self, batch: Batch) -> dict[str, Any]:
        why = "; ".join(e["message"] for e in (batch.errors or {}).get("data", []))
        counts = {"all": batch.total, "ok": batch.completed, "failed": batch.failed}
        return {
            "job": batch.id,
            "phase": PHASES[batch.status],
            "counts": counts,
            "why": why or None,
            "receipt": f"rcpt-{batch.input_file_id}",
        }

    async def _submit(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        requests = (await request.json()).get("requests")
        ids = [r.get("id") for r in requests] if isinstance(requests, list) else []
        if not ids or len(set(ids)) != len(ids) or not all(isinstance(i, str) and i for i in ids):
            return web.json_response({"problem": "requests: unique ids, at least one"}, status=400)
        lines = [
            {"custom_id": r["id"], "method": "POST", "url": "/v1/chat/completions", "body": r["chat"]}
            for r in requests
        ]
        with self._batch_lock:
            file_id = self._new_id("file")
            self.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
            batch = Batch(
                self._new_id("job"), file_id, "/v1/chat/completions", time.time(), len(self.created)
            )
            batch.total = len(lines)
            self.batches[batch.id] = batch
            self.created.append(batch.id)
        return web.json_response(self._body(batch))

    def _batch(self, request: web.Request) -> Batch | web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        batch = self.batches.get(request.match_info["id"])
        return batch if batch is not None else web.json_response({"problem": "no such job"}, status=404)

    async def _job(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, Batch):
            return batch
        if batch.status == "in_progress" and time.time() - batch.created >= self.delay:
            self._finish(batch)
        return web.json_response(self._body(batch))

    async def _stop(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, Batch):
            return batch
        if batch.status == "in_progress":
            batch.status, batch.ended = "cancelled", time.time()
        return web.json_response(self._body(batch))

    async def _answers(self, request: web.Request) -> web.Response:
        batch = self._batch(request)
        if not isinstance(batch, Batch):
            return batch
        if batch.status == "in_progress":
            return web.json_response({"problem": "the job has not ended"}, status=409)
        if self.output_gone(batch.number):
            return web.json_response({"problem": "no such answers"}, status=404)
        if self.download_faults > 0:
            self.download_faults -= 1
            return web.json_response({"problem": "the server had an error"}, status=500)
        out = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            for raw in self.files.get(file_id or "", b"").splitlines():
                out.append(_answer(raw))
        return web.Response(
            body="".join(line + "\n" for line in out).encode(), content_type="application/jsonl"
        )


def _answer(raw: bytes) -> str:
    """One line of an OpenAI output or error file in FakeCo's words (a line that is no result as it is)."""
    try:
        line = json.loads(raw)
        response, error = line.get("response") or {}, line.get("error")
        if response.get("status_code") == 200 and not error:
            return json.dumps({"id": line["custom_id"], "ok": True, "reply": response["body"]})
        problem = error or response.get("body", {}).get("error")
        return json.dumps({"id": line["custom_id"], "ok": False, "problem": json.dumps(problem)})
    except (ValueError, AttributeError, KeyError, TypeError):
        return raw.decode()
