"""The project's own checks (pytest_mathcomp_check hooks in its conftest.py) applied to a case's result."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest

from .. import owncheck
from ..run import Run
from ..types import NEUTRAL
from ..verdict.result import CaseResult
from . import known_failures


def _given(scores: Any) -> Any:
    return scores


def apply(config: pytest.Config, run: Run, result: CaseResult, generated: bool = False) -> CaseResult:
    """The failures the project's pytest_mathcomp_check hooks find in ``result`` (see plugin/hookspec.py)."""
    hook = config.hook.pytest_mathcomp_check
    if not hook.get_hookimpls():
        return result
    own = result.condition.framing == NEUTRAL
    neutral = (
        functools.partial(_given, result.scores)
        if own
        else functools.partial(run.neutral_scores, result.condition, generated)
    )
    found = [
        failure for got in hook(case=result, scores=result.scores, neutral=neutral) for failure in got or []
    ]
    if not found:
        return result
    base = known_failures.base_own_checks(hook, run, result, generated)  # known when the base fails them too
    return replace(
        result,
        extra_failures=tuple(str(f) for f in found),
        own_values=owncheck.values(found),
        base_extra_failures=None if base is None else tuple(str(f) for f in base),
        base_own_values=None if base is None else owncheck.values(base),
    )
