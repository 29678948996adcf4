"""An event loop on a thread of its own: a client's connections live there, and any thread may ask.

A backend that runs its loop in the calling thread serves one call at a time; with the loop here, a case
asked ahead of its turn (backends/ahead.py) and the case under way share one client, one connection
pool and one Liveness.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Iterator
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

    def run_each(self, coros: Iterator[Coroutine[Any, Any, Any]]) -> None:
        """Start each coroutine as soon as ``coros`` makes it (the caller's thread prepares the next while
        the loop runs those before), and wait for all; the first to fail cancels the others and is raised,
        and no coroutine is started after it failed (a server gone ends the call once, not once a piece)."""
        futures: list[concurrent.futures.Future[Any]] = []
        try:
            for coro in coros:
                if any(f.done() and not f.cancelled() and f.exception() is not None for f in futures):
                    coro.close()
                    break
                futures.append(asyncio.run_coroutine_threadsafe(coro, self.loop))
            done, _ = concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
            for future in futures:
                if future in done:
                    future.result()  # raises the failure that ended the wait
        except BaseException:
            for future in futures:
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
