"""--batch in one run: the model's batch backend, the turns it answers into the cache before the first case
(run/prefetch.py), and what was done by batch, this process's and the processes' it heard from
(summary.json's `batch`). The batch backend and its provider load with the model, not on import."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..backends.models import ModelSpec
from ..protocols import Kit
from ..settings import BackendOptions

if TYPE_CHECKING:
    from ..backends.batch.backend import BatchBackend
    from ..backends.batch.outcome import BatchSummary
    from .prefetch import Case


class Batching:
    """The run's batch backend, held here whatever wraps the model: the run prefetches by it."""

    def __init__(self) -> None:
        self.backend: BatchBackend | None = None
        """The model's batch backend; None until the model is made, and without --batch."""
        self.say: Callable[[str], None] = lambda line: None
        """Where the batches' progress lines go (set by the run's prefetch)."""
        self._parts: list[BatchSummary] = []
        """What other processes did by batch (an xdist controller's workers)."""

    def model(self, spec: ModelSpec, options: BackendOptions) -> BatchBackend | None:
        """The model's backend under --batch for an API model (its lines go to ``say``); None otherwise."""
        if options.batch is None or spec.kind != "api":
            return None
        from ..backends.batch.backend import BatchBackend

        self.backend = BatchBackend(spec.name, options, say=lambda line: self.say(line))
        return self.backend

    def prefetch(self, asked: Sequence[Case], kit: Kit) -> None:
        """Every turn of ``asked`` the cache cannot answer, answered by batch into the cache; nothing
        without a batch backend. BackendError (a BatchError) when the run must stop."""
        if self.backend is None:
            return
        from .prefetch import turns

        turns(self.backend, asked, kit)

    def summary(self) -> BatchSummary | None:
        """summary.json's `batch`: what this process did by batch, added to what the processes it heard
        from did (``add``); None when nothing was asked by batch."""
        from ..backends.batch.outcome import BatchSummary

        own = self.backend.summary() if self.backend is not None else None
        return BatchSummary.added([*self._parts, *([own] if own is not None else [])])

    def add(self, part: BatchSummary) -> None:
        """What another process (an xdist worker) did by batch, for ``summary``."""
        self._parts.append(part)
