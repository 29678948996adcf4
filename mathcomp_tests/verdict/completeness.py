"""Whether a run is complete: only a complete run can pass, and only a complete run in which every case
scored may replace the baseline. Plain values in (what the plugin saw of the session), sentences out;
summary.json spells them as summary_format.completeness, and every reader asks summary_format.is_incomplete."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .checks import NOTHING_READ

SHOWN = 3
"""Case ids named in one reason; the rest are counted."""
MATCHED_NONE = "no case ran: the selection matched none (check -k, -m, --deselect and the options)"
NOT_SELECTED = "no case ran: the run was stopped before the selection was known (before collection ended)"
"""A run stopped before collection ended (under xdist: before a worker's collection reached the
controller) selected nothing it knows of; that is not a selection that matched none."""


def scored_nothing(case: Mapping[str, Any]) -> bool:
    """A case that raised, read no item, or whose every request failed: it says nothing about the model."""
    scores = case.get("scores")
    return scores is None or not scores.get("n") or float(scores.get("error_rate") or 0.0) >= 1.0


def incomplete_reasons(
    stopped: str | None,
    selected: int | None,
    reported: int,
    cases: Sequence[Mapping[str, Any]],
) -> list[str]:
    """One plain sentence per reason the run is incomplete (none: it is complete).

    ``stopped`` says why the session ended early (a signal, a server gone), ``selected`` counts the items
    collected after -k, -m and --deselect (None when collection had not ended), ``reported`` the items that reported an
    outcome, ``cases`` every case summary (test_framing's and test_generated's)."""
    reasons = []
    if stopped:
        reasons.append(stopped)
    if not selected and not reported:
        reasons.append(NOT_SELECTED if stopped and selected is None else MATCHED_NONE)
    elif selected is not None and reported < selected:
        reasons.append(
            f"{reported} of the {selected} selected cases reported an outcome: the run ended before the rest"
        )
    empty = [str(c["case"]) for c in cases if scored_nothing(c)]
    if empty:
        shown = ", ".join(empty[:SHOWN]) + (f" and {len(empty) - SHOWN} more" if len(empty) > SHOWN else "")
        many = len(empty) > 1
        reasons.append(
            f"{len(empty)} {'cases' if many else 'case'} scored nothing (the case raised, or every request "
            f"failed): {shown}"
        )
    return reasons


def baseline_refusal(reasons: Sequence[str], cases: Sequence[Mapping[str, Any]]) -> str | None:
    """Why this run must not replace the baseline (None: it may): the baseline is the team's file, replaced
    only from a complete run in which every case scored and read at least one answer."""
    if reasons:
        return "the run is incomplete (" + "; ".join(reasons) + ")"
    if not cases:
        return "the run has no case to record"
    errored = [str(c["case"]) for c in cases if c.get("error") is not None or scored_nothing(c)]
    if errored:
        return f"{len(errored)} {'cases' if len(errored) > 1 else 'case'} did not score: {', '.join(errored[:SHOWN])}"
    unread = [str(c["case"]) for c in cases if NOTHING_READ in (c.get("breaches") or [])]
    if unread:
        many = len(unread) > 1
        return (
            f"{len(unread)} {'cases' if many else 'case'} read no answer (every answer unreadable): "
            f"{', '.join(unread[:SHOWN])}; a baseline of unreadable answers would hide any later change"
        )
    return None
