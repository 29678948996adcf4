"""Liveness.supervise (backends/liveness.py) leaves nothing behind when the call it watches is cancelled:
whatever ended the work it was given, that outcome is retrieved, so asyncio has nothing to log later."""

from __future__ import annotations

import asyncio
import gc
import itertools
from typing import Any

import pytest

from mathcomp_tests.backends.liveness import Liveness


async def _cancelled_during_a_health_check() -> list[dict[str, Any]]:
    """A supervised call whose piece is cancelled from outside while the call is in a health check, and
    then the call itself (as LoopThread.close cancels every task): what the loop was told went unretrieved."""
    unretrieved: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: unretrieved.append(context))
    checking = asyncio.Event()

    async def ping() -> str | None:
        checking.set()
        await asyncio.Event().wait()  # a health check that does not come back
        return None

    ticks = itertools.count(0, 10)  # 10 s pass between two looks at the clock: the first poll checks
    liveness = Liveness("http://127.0.0.1:9", 5, timeout=1e9, ping=ping, clock=lambda: next(ticks))
    piece = asyncio.ensure_future(asyncio.Event().wait())
    work = asyncio.gather(piece)
    call = asyncio.ensure_future(liveness.supervise(work))
    await checking.wait()
    piece.cancel()
    await asyncio.wait([work])  # the piece ended, and with it the work the call was given
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    del piece, work, call
    gc.collect()
    return unretrieved


def test_a_call_cancelled_after_its_work_ended_leaves_no_unretrieved_exception() -> None:
    unretrieved = asyncio.run(_cancelled_during_a_health_check())
    assert [c["message"] for c in unretrieved] == []
