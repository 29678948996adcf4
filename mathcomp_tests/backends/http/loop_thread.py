"""An event loop on a thread of its own: a client's connections live there, and any thread may ask.

A backend that runs its loop in the calling thread serves one call at a time; with the loop here, a case
asked ahead of its turn (backends/ahead.py) and the case under way share one client, one connection
pool and one Liveness.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """``run(coro)`` from any thread; ``close()`` cancels what is under way and ends the thread."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``'s result (or its exception). Interrupted while waiting (Ctrl-C), the work is cancelled."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self, last: Coroutine[Any, Any, Any] | None = None) -> None:
        """Cancel every task under way, await ``last`` (closing the client), then stop the loop; twice is
        harmless."""
        if self.loop.is_closed():
            if last is not None:
                last.close()
            return

        async def finish() -> None:
            tasks = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if last is not None:
                await last
            await self.loop.shutdown_asyncgens()

        try:
            asyncio.run_coroutine_threadsafe(finish(), self.loop).result()
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()
