"""The lines the suite adds to pytest's report header: the model, the thresholds, the dataset, --limit and the
model's server."""

from __future__ import annotations

import pytest

from ..data import stratified
from ..printable import printable
from ..run.orchestrator import Run
from . import serving


def lines(config: pytest.Config, run: Run) -> list[str]:
    """The header's lines for this run."""
    return [
        f"mathcomp: model {printable(run.spec.given)} ({printable(run.spec.canonical)}), "
        f"prompt set {run.prompt_set.name}",
        f"thresholds: {run.thresholds.path}; {run.thresholds.describe(run.spec)}",
        *run.dataset.header(),
        *_limit_line(run),
        *serving.header(config),
    ]


def _limit_line(run: Run) -> list[str]:
    """Under --limit, how many of the dataset's scenarios each case asks (the line above counts them all); a
    limit above the dataset's size is said, not silently capped."""
    asked, total = len(run.scenarios), len(run.dataset.scenarios)
    limit = run.settings.limit
    if limit is not None and limit > total:
        return [f"--limit={limit}: all {total} scenarios (the dataset has no more; the limit is above it)"]
    if asked == total:
        return []
    return [f"--limit={limit}: {asked} of {total} scenarios, {stratified.HOW}"]
