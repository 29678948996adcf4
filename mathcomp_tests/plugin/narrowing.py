"""How pytest narrowed this session's suite, read from its options and arguments, for verdict/narrowing.py."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from ..settings import Settings
from ..verdict import narrowing
from . import matrix
from .merged import plan_of


def means(config: pytest.Config) -> list[str]:
    """The pytest options and arguments that can narrow a selection, as the user gave them (a merged run's:
    as its shards were given them)."""
    merged = plan_of(config)
    if merged is not None:
        return merged.narrowed_by
    option = config.option
    found = []
    if getattr(option, "keyword", ""):
        found.append(f"-k {option.keyword!r}")
    if getattr(option, "markexpr", ""):
        found.append(f"-m {option.markexpr!r}")
    if getattr(option, "lf", False):
        found.append("--lf")
    if getattr(option, "stepwise", False) or getattr(option, "stepwise_skip", False):
        found.append("--sw")
    if getattr(option, "deselect", None):
        found.append("--deselect")
    if getattr(option, "ignore", None) or getattr(option, "ignore_glob", None):
        found.append("--ignore")
    if any("::" in str(arg) or str(arg).endswith(".py") for arg in config.args):
        found.append("node ids")
    return found


def block(config: pytest.Config, settings: Settings, selected: Iterable[str] | None) -> dict[str, Any] | None:
    """summary.json's ``narrowed`` block for this session (None: not narrowed, or the selection unknown)."""
    if selected is None:
        return None
    return narrowing.narrowed(matrix.whole(settings), selected, means(config))
