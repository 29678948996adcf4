"""--batch before the first case: every turn of every selected case in as few rounds of batches as the
longest protocol has turns (plain: one), not a batch per case and turn.

A protocol's later turns depend on its earlier answers, so they cannot be written down before the run.
They are found by replay: each case of the selection is asked through its protocol with a ``Replay``
backend that answers from the response cache and stops at the first turn the cache cannot answer: that
call's prompts are noted; its later calls in the same ask are answered "not yet" and not noted (they
were built on answers that do not exist yet). The prompts noted across all cases go into one round of
batches; the next replay, of the asks that stopped, reaches one turn further. When no ask stops, every
turn of every case is cached and the cases run from the cache. A prompt no batch answered stays an item
error, as it would in its case.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import OnResponse
from ..backends.batch.backend import BatchBackend
from ..backends.cache.store import cache_keys
from ..protocols import ASK, Kit
from ..types import Condition, Decoding, Prompt, Response

Case = tuple[Condition, list[Prompt], list[Decoding]]
"""A case of the selection: its condition, its prompts, its decodings (one per sample)."""

ROUNDS = 8
"""At most this many rounds of batches (the longest protocol sends fewer turns)."""
NOT_YET = "not answered yet (a batch replay)"


class Replay:
    """A backend for one protocol ask: cached answers, then the first uncached turn noted and nothing after."""

    def __init__(self, backend: BatchBackend, noted: dict[str, tuple[Prompt, Decoding]]):
        self.backend, self.noted = backend, noted
        self.model_id, self.revision = backend.model_id, backend.revision
        self.stopped = False
        """A call of this ask had prompts the cache could not answer: the calls after it are not noted."""

    def cache_identity(self) -> dict[str, object]:
        return self.backend.cache_identity()

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return self.backend.prompt_inputs(prompt)

    def close(self) -> None:
        """The batch backend is the run's: it stays open."""

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        keys = cache_keys(self.backend, prompts, decoding)
        found = self.backend.cached(keys)
        out = []
        for key, prompt in zip(keys, prompts, strict=True):
            if key in found:
                out.append(found[key])
            elif key in self.backend.failed:
                out.append(self.backend.unanswered(key))
            else:
                if not self.stopped:
                    self.noted.setdefault(key, (prompt, decoding))
                out.append(Response(text="", error=NOT_YET))
        if any(r.error == NOT_YET for r in out):
            self.stopped = True
        return out


def turns(backend: BatchBackend, cases: Sequence[Case], kit: Kit) -> None:
    """Batch every turn of ``cases`` round by round until the cache answers them all. Each round replays
    only the asks that stopped in the round before; the first round sends even when it noted nothing: it
    collects the open batches of earlier runs."""
    pending = [(condition, prompts, decoding) for condition, prompts, decodings in cases for decoding in decodings]
    for _ in range(ROUNDS):
        noted: dict[str, tuple[Prompt, Decoding]] = {}
        stopped = []
        for condition, prompts, decoding in pending:
            replay = Replay(backend, noted)
            ASK[condition.protocol](prompts, replay, decoding, kit, None)
            if replay.stopped:
                stopped.append((condition, prompts, decoding))
        by_decoding: dict[Decoding, list[Prompt]] = {}
        for prompt, decoding in noted.values():
            by_decoding.setdefault(decoding, []).append(prompt)
        backend.prefetch([(prompts, decoding) for decoding, prompts in by_decoding.items()])
        if not stopped:
            return
        pending = stopped
