"""The fault server (and its batch fake) answering with the Authorization header each request carried, as a
misconfigured server or proxy that echoes its request into its reply does.

A middleware keeps each request's header where the server's ``schedule`` reads it (the request's own task),
and every answer the server makes up is `more` followed by that header, on the chat, completions and batch
endpoints alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass

from aiohttp import web

from .fake_batch_server import BatchServer
from .fault_server import FaultServer

SENT: ContextVar[str] = ContextVar("authorization", default="")
"""The Authorization header of the request being answered."""


@web.middleware
async def _remember(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    SENT.set(request.headers.get("Authorization", ""))
    return await handler(request)


class _Echoes:
    """A server's ``answer`` (every completion it makes up) followed by the header the request carried."""

    _answer = "more"

    @property
    def answer(self) -> str:
        return f"{self._answer}\n(your request said Authorization: {SENT.get()})"

    @answer.setter
    def answer(self, value: str) -> None:
        self._answer = value

    def add_routes(self, app: web.Application) -> None:
        super().add_routes(app)  # type: ignore[misc]
        app.middlewares.append(_remember)


@dataclass
class EchoServer(_Echoes, FaultServer):
    """The fault server, echoing (chat and /v1/completions)."""


@dataclass
class EchoBatchServer(_Echoes, BatchServer):
    """The batch FAKE, echoing (a batch is answered when a GET asks for its state, with that GET's header)."""
