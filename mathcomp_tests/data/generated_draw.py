"""test_generated's draw: the scenarios --generated N drew from --hypothesis-seed (Draw, and ``draw`` that
makes one), how its cases are named (``generated:<condition id>``) and where a run folder keeps their
answers (``generated/``). The run, its records, the baseline file and the item diff all name them so."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..types import Scenario

GENERATED_PREFIX = "generated:"
"""How a run and a baseline name test_generated's cases: ``generated:<condition id>``."""
GENERATED_DIR = "generated"
"""A run folder's subfolder for test_generated's results.jsonl (the fixed set's stays at the top)."""


@dataclass(frozen=True)
class Draw:
    """test_generated's scenarios: --generated N of them from --hypothesis-seed, and a digest of their text
    (the same options draw other scenarios once the generator changes)."""

    seed: int
    sha256: str
    scenarios: tuple[str, ...]

    @property
    def options(self) -> str:
        return f"--generated={len(self.scenarios)} --hypothesis-seed={self.seed}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": len(self.scenarios),
            "seed": self.seed,
            "sha256": self.sha256,
            "scenario_ids": list(self.scenarios),
        }


def draw(scenarios: Iterable[Scenario], seed: int) -> Draw:
    """The Draw of ``scenarios`` (generated from ``seed``): their ids and a sha256 of what they say."""
    chosen = list(scenarios)
    text = "\n".join(f"{s.id}\t{s.text_a}\t{s.text_b}\t{s.expr_a}\t{s.expr_b}\t{s.label}" for s in chosen)
    return Draw(seed, hashlib.sha256(text.encode()).hexdigest(), tuple(s.id for s in chosen))
