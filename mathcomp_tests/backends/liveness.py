"""Is the model server still there? Connection failures in a row and time without any reply decide.

A server that stops answering mid-run would otherwise cost minutes of retries per case, case after case.
Every API path reports each request's outcome here. Once a request could not reach the server, or no
reply came for a second, the server is also asked directly (its health check) every half second until
it replies again, and each unanswered check counts as a connection failure too: a request's own retries
can take long, the check does not. After ``max_failures`` connection failures in a row, or ``timeout``
seconds with requests waiting and no reply at all (an HTTP error is a reply; so is a passed health
check: a long batch is not a dead server), ``supervise`` cancels what is still in flight and raises
ServerGoneError naming the server and the last failure. The caller's cache already holds everything
answered before.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .base import ServerGoneError, redact

T = TypeVar("T")

POLL_SECONDS = 0.25
CHECK_SECONDS = 0.5
"""How often the server is checked directly while its requests fail to connect or nothing comes back."""
SILENT_SECONDS = 1.0
"""Without any reply for this long, the server is checked directly."""

Ping = Callable[[], Awaitable[str | None]]
"""Asks the server directly whether it is up: None when it replied, else what failed."""


class Liveness:
    """Counts connection failures in a row and the time since the server last replied."""

    def __init__(
        self,
        server: str,
        max_failures: int,
        timeout: float,
        ping: Ping | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.server = server
        self.ping = ping
        self.max_failures = max(1, max_failures)
        self.timeout = timeout
        self.clock = clock
        self.failures = 0
        self.last_failure = ""
        self.last_reply = clock()
        self._trips: set[asyncio.Event] = set()
        """One event per supervised call under way (calls may overlap: a case asked ahead of its turn)."""

    def replied(self) -> None:
        """The server answered (any HTTP status): it is there."""
        self.failures = 0
        self.last_reply = self.clock()

    def failed(self, what: str) -> None:
        """A request (or a health check) got no reply at all: refused, reset, or timed out."""
        self.failures += 1
        self.last_failure = redact(what)[:500]
        if self.failures >= self.max_failures:
            for tripped in self._trips:
                tripped.set()

    def gone(self) -> str | None:
        """Why the server counts as gone, or None while it does not."""
        if self.failures >= self.max_failures:
            return f"{self.failures} connection failures in a row"
        silent = self.clock() - self.last_reply
        if silent >= self.timeout:
            return f"no reply for {silent:.0f} s (--server-timeout={self.timeout:g})"
        return None

    def error(self, why: str) -> ServerGoneError:
        last = f"; the last failure: {self.last_failure}" if self.last_failure else ""
        return ServerGoneError(
            f"the model server at {self.server} stopped answering ({why}){last}. The run stops here; every "
            "answer received so far is in the response cache, and a rerun asks only for the rest "
            "(--max-connection-failures and --server-timeout set when a server counts as gone)"
        )

    async def check(self) -> bool:
        """Ask the server directly; its reply (or the failure) is counted. True when it replied."""
        if self.ping is None:
            return False
        failure = await self.ping()
        if failure is None:
            self.replied()
            return True
        self.failed(f"health check: {failure}")
        return False

    async def supervise(self, work: Awaitable[T]) -> T:
        """``work``'s result, or ServerGoneError (``work`` cancelled) as soon as the server counts as gone.
        The count starts afresh with a call when no other is under way."""
        if not self._trips:
            self.failures = 0
            self.last_reply = self.clock()
        tripped = asyncio.Event()
        self._trips.add(tripped)
        task = asyncio.ensure_future(work)
        checked = self.clock()
        try:
            while True:
                trip = asyncio.ensure_future(tripped.wait())
                done, _ = await asyncio.wait(
                    {task, trip}, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                trip.cancel()
                if task in done:
                    return task.result()
                doubt = self.failures or self.clock() - self.last_reply >= SILENT_SECONDS
                if doubt and self.ping is not None and self.clock() - checked >= CHECK_SECONDS:
                    checked = self.clock()
                    await self.check()
                why = self.gone()
                if why is not None and not (self.failures < self.max_failures and await self.check()):
                    raise self.error(why)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            self._trips.discard(tripped)
