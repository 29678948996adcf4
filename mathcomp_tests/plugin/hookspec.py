"""Hooks the suite calls, for a project's own conftest.py to implement (pytest's hookspec style).

Example, in the conftest.py next to your thresholds.toml (``mathcomp init`` writes one)::

    @pytest.hookimpl(optionalhook=True)
    def pytest_mathcomp_check(case, scores, neutral):
        rise = (scores.dir_err["more"] or 0) - (neutral().dir_err["more"] or 0)
        if case.condition.framing == "direct-more" and rise > 0.10:
            return [Check(f"DirErr(more) {rise:+.3f} over the neutral case", value=rise)]
        return []

A failure may be a line of text or a ``mathcomp_tests.Check`` (its message, the value it measured, a
name): against a baseline, a check that fails on the base too is a known failure only when its value is
not more than max_increase above the base's; a plain line is compared breach with breach.

``optionalhook=True`` keeps pytest quiet in sessions that do not run the suite.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..owncheck import Check
    from ..scoring.metrics import Scores
    from ..verdict.result import CaseResult

hookspec = pytest.hookspec


@hookspec
def pytest_mathcomp_check(
    case: CaseResult, scores: Scores, neutral: Callable[[], Scores]
) -> list[str | Check] | None:
    """Extra checks on one case, after its ceilings and baseline were checked.

    ``case`` is the case's result (condition, items, ceilings, baseline comparison), ``scores`` its scores,
    and ``neutral`` the scores of the neutral case with the same position, identity, format, option order
    and protocol on the same scenarios, when called (asked through the response cache on first call; the
case's own scores when it is neutral). Return the failures
    found, each one line; the case then fails with them, in the terminal table, summary.json and the
    report. Every implementation is called and their failures are joined.
    """
