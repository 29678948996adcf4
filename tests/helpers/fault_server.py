"""A real OpenAI-compatible chat server on 127.0.0.1 that misbehaves on a schedule and logs every request.

Each distinct prompt gets an index in the order the server first sees it; ``schedule(index, attempt)``
says how to answer its ``attempt``-th request (0 for the first). Tests swap the schedule between runs.
It also serves `/v1/completions` with a list of prompts per request, as vLLM does: a request gets the
first fault scheduled for any of its prompts (`bad-request` before any other: vLLM refuses a whole batch
that holds one prompt too long for the context).
Run as a script it is a plain, never-failing server with a fixed latency (for the benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from aiohttp import web

FaultKind = Literal["ok", "rate-limit", "server-error", "hang", "malformed", "empty", "bad-request"]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind = "ok"
    delay: float = 0.0
    """Seconds before answering (for `hang`: how long to hold the request, at most)."""
    retry_after: int | None = None
    text: str | None = None
    """The completion for `ok` (default: the server's answer) or the error message for errors."""


OK = Fault()
Schedule = Callable[[int, int], Fault]


def always_ok(index: int, attempt: int) -> Fault:
    return OK


@dataclass(frozen=True)
class Request:
    """One request as the server saw it; `status` is what it answered (0 while it is still open)."""

    index: int
    attempt: int
    prompt: str
    fault: FaultKind
    start: float
    end: float
    status: int
    authorization: str
    prompts: int = 1
    """Prompts the request carried (a /v1/completions request may carry many)."""


@dataclass
class FaultServer:
    """Where it listens, how it misbehaves (`schedule`, swappable at any time) and what it was asked."""

    schedule: Schedule = always_ok
    answer: str = "more"
    latency: float = 0.0
    """Seconds every request waits before its fault applies (a model's thinking time)."""
    gather: int = 0
    """Requests are held until this many are open at once, then go on (0: none is held): what a test says
    was in flight together was, however slowly the client sent it."""
    stream_interval: float = 0.0
    """Seconds between the chunks of a streamed /v1/completions reply (one word of each prompt a chunk)."""
    lifetime: float = 600.0
    """The server stops by itself after this many seconds, whatever the test does."""
    models: list[dict[str, Any]] | None = None
    """What GET /v1/models lists (swappable, like a server restarted with other weights); None: 404."""
    models_status: int = 200
    """The status GET /v1/models answers (anything but 200: that status, with an error body)."""
    reply_model: str | None = None
    """The model name every reply gives (None: the one the request asked for; a server may alias it)."""
    log: list[Request] = field(default_factory=list)
    health_checks: int = 0
    """GET /health requests received."""
    most_open: int = 0
    """The most completion requests open at once."""
    port: int = 0
    _seen: dict[str, int] = field(default_factory=dict)
    _attempts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: asyncio.AbstractEventLoop | None = None
    _release: asyncio.Event | None = None
    _gathered: asyncio.Event | None = None
    _open: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answered(self, since: int = 0) -> list[Request]:
        """Requests answered with a completion (200 with a well-formed body), from log position `since`."""
        with self._lock:
            return [r for r in self.log[since:] if r.status == 200 and r.fault in ("ok", "empty")]

    def requests(self, since: int = 0) -> list[Request]:
        with self._lock:
            return list(self.log[since:])

    def release(self) -> None:
        """End every held (`hang`) request now."""
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)

    async def _arrived(self) -> None:
        """Count the request open; hold it until ``gather`` requests are open at once."""
        self._open += 1
        self.most_open = max(self.most_open, self._open)
        if self.gather:
            if self._gathered is None:
                self._gathered = asyncio.Event()
            if self._open >= self.gather:
                self._gathered.set()
            await self._gathered.wait()

    def _next(self, prompt: str) -> tuple[int, int]:
        key = hashlib.sha256(prompt.encode()).hexdigest()
        with self._lock:
            index = self._seen.setdefault(key, len(self._seen))
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
        return index, attempt

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        index, attempt = self._next(prompt)
        fault = self.schedule(index, attempt)
        start = time.time()
        auth = request.headers.get("Authorization", "")
        with self._lock:  # logged on arrival, completed when answered: the log is in arrival order
            position = len(self.log)
            self.log.append(Request(index, attempt, prompt, fault.kind, start, start, 0, auth))
        status = 0
        try:
            await self._arrived()
            if self.latency:
                await asyncio.sleep(self.latency)  # slow peer
            if fault.kind == "hang":
                assert self._release is not None
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._release.wait(), fault.delay)
                status = 504
                return _error(504, "held past the client's timeout")
            if fault.delay:
                await asyncio.sleep(fault.delay)  # slow peer
            response = self._respond(fault, body, prompt)
            await response.prepare(request)  # sent before it counts as answered: a reply the server
            await response.write_eof()  # dropped while shutting down was never an answer
            status = response.status
            return response
        finally:
            self._open -= 1
            with self._lock:
                self.log[position] = replace(self.log[position], end=time.time(), status=status)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        prompts = body.get("prompt", [])
        prompts = [prompts] if isinstance(prompts, str) else [str(p) for p in prompts]
        seen = [self._next(p) for p in prompts]
        faults = [self.schedule(index, attempt) for index, attempt in seen]
        refused = [f for f in faults if f.kind == "bad-request"]
        fault = refused[0] if refused else next((f for f in faults if f.kind != "ok"), OK)
        start = time.time()
        index, attempt = seen[0] if seen else (-1, 0)
        with self._lock:
            position = len(self.log)
            auth = request.headers.get("Authorization", "")
            self.log.append(
                Request(index, attempt, "\n".join(prompts), fault.kind, start, start, 0, auth, len(prompts))
            )
        status = 0
        try:
            await self._arrived()
            if self.latency:
                await asyncio.sleep(self.latency)  # slow peer
            if fault.kind == "hang":
                assert self._release is not None
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._release.wait(), fault.delay)
                status = 504
                return _error(504, "held past the client's timeout")
            if fault.delay:
                await asyncio.sleep(fault.delay)  # slow peer
            if fault.kind == "bad-request":
                response = _error(400, fault.text or "a prompt is longer than the context")
            elif fault.kind in ("rate-limit", "server-error", "malformed"):
                response = self._respond(fault, body, prompts[0])
            elif body.get("stream"):
                texts = [
                    "" if fault.kind == "empty" else (fault.text if fault.text is not None else self.answer)
                ]
                stream = await self._stream(request, prompts, texts[0])
                status = stream.status
                return stream
            else:
                texts = [
                    "" if fault.kind == "empty" else (fault.text if fault.text is not None else self.answer)
                ]
                unstreamed = self.stream_interval * len(texts[0].split())  # the same engine, unstreamed
                await asyncio.sleep(unstreamed)  # slow peer
                response = web.json_response(
                    _text_completion(self.reply_model or body.get("model", "unknown"), prompts, texts * len(prompts))
                )
            status = response.status
            return response
        finally:
            self._open -= 1
            with self._lock:
                self.log[position] = replace(self.log[position], end=time.time(), status=status)

    async def _stream(self, request: web.Request, prompts: list[str], text: str) -> web.StreamResponse:
        """vLLM's streamed reply: a chunk per step holding each prompt's next word, then [DONE]."""
        stream = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await stream.prepare(request)
        words = text.split(" ")
        for step, word in enumerate(words):
            last = step == len(words) - 1
            choices = [
                {
                    "index": i,
                    "text": word if step == 0 else " " + word,
                    "finish_reason": "stop" if last else None,
                }
                for i in range(len(prompts))
            ]
            await stream.write(
                f"data: {json.dumps({'object': 'text_completion', 'choices': choices})}\n\n".encode()
            )
            if self.stream_interval and not last:
                await asyncio.sleep(self.stream_interval)  # slow peer
        await stream.write(b"data: [DONE]\n\n")
        await stream.write_eof()
        return stream

    async def _health(self, request: web.Request) -> web.Response:
        with self._lock:
            self.health_checks += 1
        return web.Response(status=200)

    async def _models(self, request: web.Request) -> web.Response:
        if self.models_status != 200:
            return _error(self.models_status, "the model list failed")
        if self.models is None:
            return _error(404, "not found")
        return web.json_response({"object": "list", "data": self.models})

    def _respond(self, fault: Fault, body: dict[str, Any], prompt: str) -> web.Response:
        if fault.kind == "rate-limit":
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            return _error(429, fault.text or "rate limit reached", headers)
        if fault.kind == "server-error":
            return _error(500, fault.text or "the server had an error")
        if fault.kind == "malformed":
            return web.Response(
                status=200, text='{"id": "chatcmpl-x", "choices": [{"mess', content_type="application/json"
            )
        text = "" if fault.kind == "empty" else (fault.text if fault.text is not None else self.answer)
        return web.json_response(_completion(self.reply_model or body.get("model", "unknown"), prompt, text))

    def add_routes(self, app: web.Application) -> None:
        """Further endpoints a subclass serves (the batch fake: files and batches)."""

    @contextmanager
    def running(self) -> Iterator[FaultServer]:
        """Serve from a background thread until the block ends (or `lifetime` runs out)."""
        started = threading.Event()
        stop: list[asyncio.Event] = []

        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._release = asyncio.Event()
            stop.append(asyncio.Event())
            runner = await _start(self)
            started.set()
            try:
                await asyncio.wait_for(stop[0].wait(), self.lifetime)
            except TimeoutError:
                pass
            finally:
                self._release.set()
                await runner.cleanup()

        thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
        thread.start()
        if not started.wait(30):
            raise RuntimeError("the fault server did not start")
        try:
            yield self
        finally:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(stop[0].set)
            thread.join(30)


async def _start(server: FaultServer) -> web.AppRunner:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", server._chat)
    app.router.add_get("/v1/models", server._models)
    app.router.add_post("/v1/completions", server._completions)
    app.router.add_get("/health", server._health)
    server.add_routes(app)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=False)
    await runner.setup()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", server.port))
    server.port = int(sock.getsockname()[1])
    await web.SockSite(runner, sock, backlog=1024).start()
    return runner


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    error = {"error": {"message": message, "type": "server_error", "code": status}}
    return web.json_response(error, status=status, headers=headers)


def _completion(model: str, prompt: str, text: str) -> dict[str, Any]:
    prompt_tokens = len(prompt.split())
    completion_tokens = len(text.split())
    return {
        "id": f"chatcmpl-{hashlib.sha256(prompt.encode()).hexdigest()[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _text_completion(model: str, prompts: list[str], texts: list[str]) -> dict[str, Any]:
    """A /v1/completions reply as a server without vLLM's token ids sends it (a word is a token here)."""
    choices = [{"index": i, "text": text, "finish_reason": "stop"} for i, text in enumerate(texts)]
    prompt_tokens = sum(len(p.split()) for p in prompts)
    completion_tokens = sum(len(t.split()) for t in texts)
    return {
        "id": "cmpl-x",
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def main() -> None:
    """`python tests/helpers/fault_server.py --latency 0.1`: prints the port, serves until --lifetime ends."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--lifetime", type=float, default=300.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--model-root", help="list one model in /v1/models: this id and root (a tokenizer's directory)"
    )
    args = parser.parse_args()
    models = (
        [{"id": args.model_root, "object": "model", "root": args.model_root}] if args.model_root else None
    )
    server = FaultServer(latency=args.latency, lifetime=args.lifetime, port=args.port, models=models)

    async def serve() -> None:
        server._release = asyncio.Event()
        runner = await _start(server)
        print(json.dumps({"port": server.port}), flush=True)
        try:
            await asyncio.sleep(args.lifetime)  # slow peer: it serves until its lifetime ends
        finally:
            await runner.cleanup()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
