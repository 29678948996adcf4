"""Is the model server still there, and still answering? Three counts decide, whichever trips first.

A server that stops answering mid-run would otherwise cost minutes of retries per case, case after case.
Every API path reports each completion request's outcome here:
- ``answered``: the server processed the request (a completion, or a refusal of the request itself such
  as 400 "prompt too long"); it resets every count below. For a streamed request each chunk of tokens is
  an answer, so a long generation that makes progress is never cut.
- ``errored``: an error reply (408, 429, 5xx, or a 200 whose body is no completion: not JSON, not the
  OpenAI shape; see ``bad_body``). After ``max_errors`` of them in a row with no answer in
  between (the caller's own retries already spent: litellm's inside a chat request, the batched client's
  per attempt) the server counts as down, and the error names the replies seen (status codes, bodies).
- ``failed``: no reply at all (refused, reset, timed out). Once a request could not reach the server, or
  no answer came for a second, the server is also asked directly (its health check) every half second;
  each unanswered check counts as a connection failure too. ``max_failures`` in a row: gone.
Besides, ``timeout`` seconds with requests waiting and no answer: gone. A passed health check or an error
reply is no answer: a server that keeps its model list up but never completes a request ends the run
``timeout`` seconds after its last answer. ``supervise`` cancels what is still in flight and raises
ServerGoneError naming the server and why.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .base import ServerGoneError
from .secrets import redact

T = TypeVar("T")

POLL_SECONDS = 0.25
CHECK_SECONDS = 0.5
"""How often the server is checked directly while its requests fail to connect or nothing comes back."""
SILENT_SECONDS = 1.0
"""Without any answer for this long, the server is checked directly."""
DOWN_STATUS = frozenset({408, 429})
"""Error replies that count towards the error streak besides every 5xx."""
NOT_JSON = "HTTP 200 with a body that is not JSON"
NOT_OPENAI = "HTTP 200 with a body that is not an OpenAI {what}"
BODY_CHARS = 80
"""Characters of such a body an item error shows (redacted: a proxy may echo the request's key)."""


def bad_body(kind: str, body: str) -> str:
    """An item error for a 200 whose body is no completion: what was wrong, then the body's start."""
    return f"{kind}: {redact(body[:BODY_CHARS])!r}"

Ping = Callable[[], Awaitable[str | None]]
"""Asks the server directly whether it is up: None when it replied, else what failed."""


def counts_as_error(status: int | None) -> bool:
    """A reply that says the server cannot answer now (overloaded, failing, rate-limited)."""
    return status is not None and (status >= 500 or status in DOWN_STATUS)


class Liveness:
    """Counts connection failures and error replies in a row, and the time since the last answer."""

    def __init__(
        self,
        server: str,
        max_failures: int,
        timeout: float,
        ping: Ping | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        max_errors: int = 32,
        cached: bool = True,
    ):
        self.server = server
        self.ping = ping
        self.max_failures = max(1, max_failures)
        self.max_errors = max(1, max_errors)
        self.timeout = timeout
        self.cached = cached
        """Whether answers go to a response cache (the error then says a rerun resumes from it)."""
        self.clock = clock
        self.failures = 0
        self.last_failure = ""
        self.errors: Counter[str] = Counter()
        """The error replies of the current streak, as ``HTTP <status>`` or what was wrong with a 200."""
        self.last_answer = clock()
        self.last_check = float("-inf")
        """When a supervised call last checked the server directly: calls in flight together share the
        checks, one per CHECK_SECONDS, instead of each checking for itself."""
        self._trips: set[asyncio.Event] = set()
        """One event per supervised call under way (calls may overlap: a case asked ahead of its turn)."""

    @property
    def streak(self) -> int:
        return sum(self.errors.values())

    def answered(self) -> None:
        """The server processed a completion request: it is there and working."""
        self.failures = 0
        self.errors.clear()
        self.last_answer = self.clock()

    def reachable(self) -> None:
        """The server replied, but with no answer (a health check): it is there, not that it works."""
        self.failures = 0

    def errored(self, status: int, what: str | None = None) -> None:
        """A completion request got an error reply (see ``counts_as_error``), or a 200 that is none
        (``what`` says what was wrong with it: NOT_JSON, NOT_OPENAI)."""
        self.failures = 0
        self.errors[what or f"HTTP {status}"] += 1
        if self.streak >= self.max_errors:
            self._trip()

    def failed(self, what: str) -> None:
        """A request (or a health check) got no reply at all: refused, reset, or timed out."""
        self.failures += 1
        self.last_failure = redact(what)[:500]
        if self.failures >= self.max_failures:
            self._trip()

    def _trip(self) -> None:
        for tripped in self._trips:
            tripped.set()

    def gone(self) -> str | None:
        """Why the server counts as gone, or None while it does not."""
        if self.failures >= self.max_failures:
            return f"{self.failures} connection failures in a row"
        seen = ", ".join(f"{reply} x{n}" for reply, n in sorted(self.errors.items()))
        if self.streak >= self.max_errors:
            return f"{self.streak} error replies in a row and no answer: {seen} (--max-error-streak={self.max_errors})"
        silent = self.clock() - self.last_answer
        if silent >= self.timeout:
            meanwhile = f"; error replies meanwhile: {seen}" if seen else ""
            return f"no answer for {silent:.0f} s (--server-timeout={self.timeout:g}){meanwhile}"
        return None

    def error(self, why: str) -> ServerGoneError:
        last = f"; the last failure: {self.last_failure}" if self.last_failure else ""
        kept = (
            "every answer received so far is in the response cache, and a rerun asks only for the rest"
            if self.cached
            else "nothing is cached under --no-cache, so a rerun asks for every answer again"
        )
        return ServerGoneError(
            f"the model server at {self.server} stopped answering ({why}){last}. The run stops here; {kept} "
            "(--max-connection-failures, --max-error-streak and --server-timeout set when a server counts "
            "as gone)"
        )

    async def check(self) -> bool:
        """Ask the server directly; its reply (or the failure) is counted. True when it replied."""
        if self.ping is None:
            return False
        failure = await self.ping()
        if failure is None:
            self.reachable()
            return True
        self.failed(f"health check: {failure}")
        return False

    async def supervise(self, work: Awaitable[T]) -> T:
        """``work``'s result, or ServerGoneError (``work`` cancelled) as soon as the server counts as gone.
        The counts start afresh with a call when no other is under way."""
        if not self._trips:
            self.failures = 0
            self.errors.clear()
            self.last_answer = self.clock()
        tripped = asyncio.Event()
        self._trips.add(tripped)
        task = asyncio.ensure_future(work)
        started = self.clock()
        try:
            while True:
                trip = asyncio.ensure_future(tripped.wait())
                done, _ = await asyncio.wait(
                    {task, trip}, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                trip.cancel()
                if task in done:
                    return task.result()
                doubt = self.failures or self.clock() - self.last_answer >= SILENT_SECONDS
                since = self.clock() - max(started, self.last_check)
                if doubt and self.ping is not None and since >= CHECK_SECONDS:
                    self.last_check = self.clock()
                    await self.check()
                why = self.gone()
                if why is not None and self.failures >= self.max_failures and await self.check():
                    why = self.gone()  # one more check may clear a connection count, never the others
                if why is not None:
                    raise self.error(why)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            elif not task.cancelled():
                task.exception()  # retrieved: a piece cancelled from outside ended it while we were away
            self._trips.discard(tripped)
