"""What answers a run in place of its models: the Run asks it for its model and its judge instead of
creating them (a merge answers from the shards' records, merge/rebuild.py ``Replay``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ..backends.base import Backend
from ..types import Prompt


class Answering(Protocol):
    """The model and the judge of a run, and the folder it is written in."""

    @property
    def folder(self) -> Path:
        """The run's folder, whatever its id."""
        ...

    def model(self, samples: int) -> Backend:
        """The model (``samples``: --samples, which the decodings' seeds tell apart)."""
        ...

    def judge(self, model_id: str, judge_prompt: Callable[[Mapping[str, Any]], Prompt | None]) -> Backend:
        """The judge ``model_id``; ``judge_prompt`` rebuilds what it was asked about a record's answer (None:
        a record of no scenario of the run)."""
        ...
