"""New and known failures, the pytest way: under --fail-on=new a known failure (the base fails that case
too) is reported as xfailed, so it does not fail the job but stays in the terminal, JUnit XML and the
report; a case's own checks run on the base's answers decide whether their failures are known; and the
terminal's line that counts both. What is new or known is verdict/standing.py's to say."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pytest

from ..data.generated_draw import GENERATED_PREFIX
from ..run.orchestrator import Run
from ..scoring.metrics import Scores
from ..scoring.own_paired import Side
from ..types import NEUTRAL
from ..verdict.result import CaseResult
from ..verdict.standing import KNOWN, NEW, known_reason


def known_as_xfail(fail_on: str, report: pytest.TestReport, case: Mapping[str, Any] | None) -> None:
    """Turn a failed case's report into an xfail when the run's --fail-on is new and the case is known (the
    run's setting, not the command line's: a merged run takes it from its shards)."""
    if case is None or report.when != "call" or not report.failed:
        return
    if fail_on == NEW and case.get("standing") == KNOWN:
        report.outcome = "skipped"
        report.wasxfail = known_reason(case)


class _NoBase(Exception):
    """The baseline has no answers for the neutral case a check asks for."""


def base_own_checks(
    call: Callable[..., list[Any]], run: Run, result: CaseResult, generated: bool
) -> tuple[object, ...] | None:
    """The failures the project's checks find on the base's answers to the same items (its scores, and
    its neutral case's from the baseline), so that a case failing them as its base does is known; None
    when the baseline has no answers for the case or its neutral partner. The base's view carries no
    items: a check that reads them sees none."""
    comparator = run.comparator
    if comparator is None or result.base_scores is None:
        return None
    own = result.condition.framing == NEUTRAL
    base_view = replace(
        result, items=(), scores=result.base_scores, sample_scores=(), comparison=None, base_scores=None
    )

    def neutral() -> Scores:
        if own:
            return result.base_scores  # type: ignore[return-value]
        condition = replace(result.condition, framing=NEUTRAL)
        prompts = run.prompts_for(condition, run.generated if generated else None)
        case_id = (GENERATED_PREFIX if generated else "") + condition.id
        scores = comparator.base_scores(case_id, prompts, run.decoding(condition))
        if scores is None:
            raise _NoBase(case_id)
        return scores

    try:
        return tuple(call(case=base_view, scores=result.base_scores, neutral=neutral))
    except _NoBase:
        return None


def paired_sides(run: Run, result: CaseResult, generated: bool) -> tuple[Side, Side] | None:
    """The candidate's and the base's outcomes on the case and its neutral partner, for the paired test of
    an own check (scoring/own_paired.py); None when the baseline lacks either case."""
    comparator = run.comparator
    if comparator is None:
        return None
    chosen = run.generated if generated else None
    prefix = GENERATED_PREFIX if generated else ""
    neutral = replace(result.condition, framing=NEUTRAL)
    own = result.condition == neutral
    base_case = comparator.base_outcomes(
        prefix + result.condition.id, run.prompts_for(result.condition, chosen), run.decoding(result.condition)
    )
    base_neutral = (
        base_case
        if own
        else comparator.base_outcomes(prefix + neutral.id, run.prompts_for(neutral, chosen), run.decoding(neutral))
    )
    if base_case is None or base_neutral is None:
        return None
    candidate_neutral = result.outcomes() if own else run.neutral_result(result.condition, generated).outcomes()
    return Side(result.outcomes(), candidate_neutral), Side(base_case, base_neutral)


def terminal_line(cases: Sequence[Mapping[str, Any]], baseline: Mapping[str, Any]) -> str | None:
    """``failures against the baseline: 1 new (the base passed them, or they got significantly worse), 2 known
    (the base fails them too)``."""
    new, known = (sum(c.get("standing") == s for c in cases) for s in (NEW, KNOWN))
    if not (new or known):
        return None
    line = (
        f"failures against the baseline: {new} new (the base passed them, or they got significantly worse), "
        f"{known} known (the base fails them too)"
    )
    if baseline.get("fail_on") == NEW and known:
        line += "; --fail-on=new: the known ones are xfailed"
    return line
