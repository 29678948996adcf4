"""The project's own checks (pytest_mathcomp_check hooks in its conftest.py) applied to a case's result."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest

from .. import owncheck
from ..run.orchestrator import Run
from ..scoring import own_paired
from ..types import NEUTRAL
from ..verdict.result import CaseResult
from . import known_failures


def _given(scores: Any) -> Any:
    return scores


def call(hook: Any, **kwargs: Any) -> list[str | owncheck.Check]:
    """Every implementation's failures, joined; a return that is not a list of failures (a bare string, a
    dict, a Check whose value is no finite number) stops the run with one line naming the hook and what it
    returned (exit 4): read as failures it became a failure per character or key, or a NaN never worse."""
    found: list[str | owncheck.Check] = []
    for impl in reversed(hook.get_hookimpls()):  # pluggy's own order: the last registered first
        got = impl.function(**{name: kwargs[name] for name in impl.argnames})
        problem = owncheck.problem(got)
        if problem is not None:
            where = f"pytest_mathcomp_check in {impl.plugin_name}"
            pytest.exit(f"{where} {problem}", returncode=pytest.ExitCode.USAGE_ERROR)
        found += got or []
    return found


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
    found = call(hook, case=result, scores=result.scores, neutral=neutral)
    if not found:
        return result
    base = known_failures.base_own_checks(  # known when the base fails them too
        functools.partial(call, hook), run, result, generated
    )
    base_values = None if base is None else owncheck.values(base)
    return replace(
        result,
        extra_failures=tuple(str(f) for f in found),
        own_values=owncheck.values(found),
        base_extra_failures=None if base is None else tuple(str(f) for f in base),
        base_own_values=base_values,
        own_tests=_paired_tests(run, result, generated, found, base_values or {}),
    )


def _paired_tests(
    run: Run, result: CaseResult, generated: bool, found: list[Any], base_values: dict[str, float]
) -> dict[str, dict[str, Any]]:
    """The paired test of each failure the base shares whose Check can recompute its value."""
    measured = {
        f.key: f.measure
        for f in found
        if isinstance(f, owncheck.Check) and f.measure is not None and f.value is not None and f.key in base_values
    }
    sides = known_failures.paired_sides(run, result, generated) if measured else None
    if sides is None or run.comparator is None:
        return {}
    limit, alpha = min(result.ceilings.max_increase.values()), run.comparator.alpha
    tests = {key: own_paired.rise(key, m, result.golds(), *sides, limit, alpha) for key, m in measured.items()}
    return {key: test for key, test in tests.items() if test is not None}
