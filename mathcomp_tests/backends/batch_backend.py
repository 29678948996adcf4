"""An API model answered through the provider's batch API (--batch): half the price, outside the live
rate limits, answers within hours rather than seconds.

It is the api backend (same probe, same cache identity, so a batch answer sits under the key a live answer
would) whose prompts go to batches instead of chat requests. The plugin hands it the whole selection
before the first case (``prefetch``); what a case still asks (a protocol's later turns, say) goes by batch
too, or live with --batch-fallback=live. A request no batch answered is an item error, never an answer.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence

from ..settings import BackendOptions, BatchOptions
from ..types import Decoding, Prompt, Response
from .api import APIBackend, _api_key
from .base import BackendError, OnResponse
from .batch_anthropic import AnthropicBatches
from .batch_api import BatchAPI, OpenAIBatches, Pricing
from .batch_records import BatchRecords
from .batch_run import Batcher, Outcome, Say
from .cache import ResponseCache, Row, cache_keys

PROVIDERS: dict[str, type[OpenAIBatches] | type[AnthropicBatches]] = {
    "openai/": OpenAIBatches,
    "anthropic/": AnthropicBatches,
}
"""Model string prefixes whose provider's batch API is wired: OpenAI's Batch API (and any OpenAI-compatible
server that serves the Files and Batches endpoints), Anthropic's Message Batches."""


class BatchBackend(APIBackend):
    """The api backend whose requests go into the provider's batches."""

    streams = True

    def __init__(self, model: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        if options.batch is None:
            raise BackendError("the batch backend needs --batch")
        prefix = next((p for p in PROVIDERS if model.startswith(p)), None)
        if prefix is None or options.model_config is not None:
            raise BackendError(
                "--batch takes an OpenAI model or an OpenAI-compatible server (openai/<name>, with or without "
                "--api-base) or an Anthropic model (anthropic/<name>), not a --model-config Router"
            )
        super().__init__(model, options)
        self.batch: BatchOptions = options.batch
        params = self.plan.deployments[0]["litellm_params"]
        self.live_fallback = self.batch.fallback == "live"
        self.say: Say = lambda line: None
        """Where progress lines go (the plugin points it at the terminal)."""
        self.failed: dict[str, str] = {}
        """Keys no batch answered in this run, with why: a case gets the error instead of another batch."""
        self._cache = ResponseCache(self.batch.cache_path)
        self.price = Pricing(self._litellm, model)
        api: BatchAPI = PROVIDERS[prefix](
            self._litellm, model.split("/", 1)[1], params.get("api_base"), _api_key(params)
        )
        self.batcher = Batcher(
            api,
            BatchRecords(self.batch.cache_path.parent),
            self.model_id,
            self.price,
            self._store,
            wait=self.batch.wait,
            poll=self.batch.poll,
            rounds=self.batch.rounds,
            resend_failed=not self.live_fallback,
            say=lambda line: self.say(line),
        )

    def _store(self, answers: list[tuple[str, Response]]) -> None:
        now = time.time()
        self._cache.put_many([Row(key, self.model_id, self.revision, r, now) for key, r in answers])

    def prefetch(self, asked: Sequence[tuple[Sequence[Prompt], Decoding]]) -> Outcome:
        """Every prompt of ``asked`` the cache cannot answer, sent by batch and its answer cached. The cache
        is read under the lock: a process that waited on another's batches finds their answers."""
        with self._lock():
            lines: dict[str, bytes] = {}
            for prompts, decoding in asked:
                keys = cache_keys(self, prompts, decoding)
                hits = self._cache.get_many(keys)
                for key, prompt in zip(keys, prompts, strict=True):
                    if key not in hits and key not in lines:
                        lines[key] = self.batcher.api.line(key, prompt, decoding)
            outcome = self._loop.run_until_complete(self.batcher.answer(lines))
        self.failed.update(outcome.failed)
        return outcome

    def unanswered(self, key: str) -> Response:
        """The item error of a request no batch answered in this run."""
        return Response(text="", error=f"no batch answered this request: {self.failed.get(key, 'unknown')}")

    def cached(self, keys: Sequence[str]) -> dict[str, Response]:
        """The answers the response cache holds for ``keys``."""
        return self._cache.get_many(list(keys))

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
        if rest and self.live_fallback:
            fresh = super().complete([prompts[n] for n in rest], decoding)
            for n, response in zip(rest, fresh, strict=True):
                out[n] = response
        elif rest:
            self.prefetch([([prompts[n] for n in rest], decoding)])
            found = self._cache.get_many([keys[n] for n in rest])
            for n in rest:
                out[n] = found.get(keys[n]) or self.unanswered(keys[n])
        answers = [r for r in out if r is not None]
        if on_response:
            for n, response in enumerate(answers):
                on_response(n, response)
        return answers

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self.batcher.api.close())
        super().close()
        self._cache.close()
