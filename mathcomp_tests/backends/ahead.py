"""A case asked ahead of its turn: while one case is read, scored and recorded, the engine answers the next.

Cases run one after another, so an engine asked case by case idles between them and ends each case on a
part-full batch. The plugin knows which case comes next; the run starts its prompts here, on a worker
thread (``start``), and when that case comes up, ``complete`` with the same prompts and decoding waits for
that answer instead of asking again. Only a backend whose ``complete`` may run from several threads at
once (``concurrent = True``: the batched completions client) is wrapped. Answers are cached by the
wrapped CachedBackend as they arrive, whichever thread asked, so a run stopped half way keeps them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from ..types import Decoding, Message, Prompt, Response
from .base import OnResponse
from .cache.store import CachedBackend

WORKERS = 2
"""Calls under way at once besides the caller's own: the next case, and the one after it on a fast engine."""

Key = tuple[Decoding, tuple[tuple[Message, ...], ...]]


def _key(prompts: Sequence[Prompt], decoding: Decoding) -> Key:
    """What a call is: the messages sent and the decoding (a concurrent backend reads nothing else)."""
    return decoding, tuple(p.messages for p in prompts)


class AskedAhead:
    """A CachedBackend whose calls can start before they are made."""

    def __init__(self, inner: CachedBackend):
        self.inner = inner
        self.model_id = inner.model_id
        self.revision = inner.revision
        self.calls = 0
        """Prompts sent to the model (not answered from the cache) for the calls made so far."""
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="mathcomp-ahead")
        self._ahead: dict[Key, Future[list[Response]]] = {}
        self._lock = threading.Lock()

    @property
    def applied_chat_template(self) -> str | None:
        return self.inner.applied_chat_template

    def cache_identity(self) -> dict[str, object]:
        return self.inner.cache_identity()

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return self.inner.prompt_inputs(prompt)

    def start(self, prompts: Sequence[Prompt], decoding: Decoding) -> None:
        """Begin asking ``prompts`` now (once: a second start of the same call does nothing)."""
        key = _key(prompts, decoding)
        with self._lock:
            if key not in self._ahead:
                self._ahead[key] = self._pool.submit(self.inner.complete, list(prompts), decoding)

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        """The answers of a call started ahead (waited for; ``on_response`` then sees each), else asked now."""
        with self._lock:
            future = self._ahead.pop(_key(prompts, decoding), None)
        if future is None:
            responses = self.inner.complete(prompts, decoding, on_response)
        else:
            responses = future.result()
            if on_response is not None:
                for index, response in enumerate(responses):
                    on_response(index, response)
        self.calls += sum(not r.cached for r in responses)
        return responses

    def close(self) -> None:
        """Drop the calls not begun, stop the ones under way (the inner backend cancels its requests),
        then wait for the workers."""
        with self._lock:
            for future in self._ahead.values():
                future.cancel()
            self._ahead.clear()
        self.inner.inner.close()  # the requests under way end, so the workers return at once
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.inner.close()  # then the cache, which no worker writes any more
