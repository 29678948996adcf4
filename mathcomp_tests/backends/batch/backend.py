"""An API model answered through the provider's batch API (--batch): half the price, outside the live
rate limits, answers within hours rather than seconds.

It holds the live api backend (composition: same probe, same cache identity, so a batch answer sits under
the key a live answer would; and the live path for --batch-fallback=live) and a provider-neutral runner
(runner.py) over the provider's batch API. Answers are written through the store of the CachedBackend that
wraps it (``keep_answers_in``): one response cache. The run hands it the whole selection before the first
case (``prefetch``); what a case still asks goes by batch too, or live with --batch-fallback=live. A
request no batch answered is an item error, never an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Sequence

from ...settings import BackendOptions, BatchOptions
from ...types import Decoding, Prompt, Response
from ..base import BackendError, OnResponse
from ..cache.store import AnswerStore, Row, cache_keys
from ..chat.api import APIBackend
from . import PROVIDERS, provider
from .outcome import BatchSummary
from .pricing import Pricing
from .protocol import BatchAPI, BatchRequest
from .runner import Runner, Say
from .submissions import Submissions

Asked = Sequence[tuple[Sequence[Prompt], Decoding]]
"""Calls to answer: each a list of prompts under one decoding."""


def _quiet(line: str) -> None:
    """Where progress lines go when nobody listens (a judge's or a baseline model's batches)."""


class BatchBackend:
    """A Backend whose requests go into the provider's batches."""

    streams = True

    def __init__(self, model: str, options: BackendOptions | None = None, say: Say = _quiet):
        options = options or BackendOptions()
        if options.batch is None:
            raise BackendError("the batch backend needs --batch")
        name, slash, rest = model.partition("/")
        if not slash or name not in PROVIDERS or options.model_config is not None:
            known = ", ".join(f"{p}/<name>" for p in PROVIDERS)
            raise BackendError(
                f"--batch takes a model of a provider whose batch API is wired ({known}; an OpenAI-compatible "
                "server is openai/<name> with --api-base), not a --model-config Router"
            )
        self.live = APIBackend(model, options)
        """The live path: the probe, the cache identity, and --batch-fallback=live."""
        self.model_id, self.revision = self.live.model_id, self.live.revision
        self.batch: BatchOptions = options.batch
        self.live_fallback = self.batch.fallback == "live"
        self.failed: dict[str, str] = {}
        """Keys no batch answered in this run, with why: a case gets the error instead of another batch."""
        self._store: AnswerStore | None = None
        import litellm

        self.price = Pricing(litellm, model)
        api: BatchAPI = provider(name)(litellm, rest, options.api_base, None)
        self._loop = asyncio.new_event_loop()
        self.runner = Runner(
            api,
            Submissions(self.batch.cache_path.parent),
            self.model_id,
            self.price,
            self._keep,
            wait=self.batch.wait,
            poll=self.batch.poll,
            rounds=self.batch.rounds,
            resend_failed=not self.live_fallback,
            say=say,
        )

    def cache_identity(self) -> dict[str, object]:
        return self.live.cache_identity()

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return self.live.prompt_inputs(prompt)

    def keep_answers_in(self, store: AnswerStore) -> None:
        """The response cache that wraps this backend: batch answers are read from and written to it."""
        self._store = store

    def _cache(self) -> AnswerStore:
        if self._store is None:
            raise BackendError("--batch needs the response cache (batch answers are read back from it)")
        return self._store

    def _keep(self, answers: list[tuple[str, Response]]) -> None:
        now = time.time()
        self._cache().put_many([Row(key, self.model_id, self.revision, r, now) for key, r in answers])

    def cached(self, keys: Sequence[str]) -> dict[str, Response]:
        """The answers the response cache holds for ``keys``."""
        return self._cache().get_many(list(keys))

    def prefetch(self, asked: Asked) -> None:
        """Every prompt of ``asked`` the cache cannot answer, sent by batch and its answer cached. The cache
        is read under the lock: a process that waited on another's batches finds their answers."""
        with self._lock():
            requests: dict[str, BatchRequest] = {}
            for prompts, decoding in asked:
                keys = cache_keys(self, prompts, decoding)
                hits = self.cached(keys)
                for key, prompt in zip(keys, prompts, strict=True):
                    if key not in hits and key not in requests:
                        requests[key] = BatchRequest(key, prompt, decoding)
            outcome = self._loop.run_until_complete(self.runner.answer(requests))
        self.failed.update(outcome.failed)

    def unanswered(self, key: str) -> Response:
        """The item error of a request no batch answered in this run."""
        return Response(text="", error=f"no batch answered this request: {self.failed.get(key, 'unknown')}")

    def summary(self) -> BatchSummary | None:
        """What this process did by batch (summary.json's `batch`); None when no call asked the batches."""
        return BatchSummary.of(self.runner.total, self.price.source) if self.runner.ran else None

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """One process at a time waits on the batches of a cache folder (xdist workers take turns: the
        second finds the first's answers in the cache)."""
        from filelock import FileLock

        with FileLock(f"{self.batch.cache_path.parent / 'batches'}.lock"):
            yield

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        """What the cache did not answer: the error of a request no batch answered in this run, or a
        batch (live with --batch-fallback=live)."""
        keys = cache_keys(self, prompts, decoding)
        out: list[Response | None] = [None] * len(prompts)
        for n, key in enumerate(keys):
            if key in self.failed and not self.live_fallback:
                out[n] = self.unanswered(key)
        rest = [n for n, r in enumerate(out) if r is None]
        told: set[int] = set()
        if rest and self.live_fallback:

            def tell(j: int, response: Response) -> None:
                told.add(rest[j])
                if on_response:
                    on_response(rest[j], response)

            fresh = self.live.complete([prompts[n] for n in rest], decoding, tell)
            for n, response in zip(rest, fresh, strict=True):
                out[n] = response
        elif rest:
            self.prefetch([([prompts[n] for n in rest], decoding)])
            found = self.cached([keys[n] for n in rest])
            for n in rest:
                out[n] = found.get(keys[n]) or self.unanswered(keys[n])
        answers = [r for r in out if r is not None]
        if on_response:
            for n, response in enumerate(answers):
                if n not in told:
                    on_response(n, response)
        return answers

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self.runner.api.close())
            self._loop.close()
        self.live.close()
