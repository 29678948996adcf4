"""What the site keeps of a night's summary.json once its verdict is read: the fields the index and the history
page read, nothing else. A full-matrix summary (476 cases, each with its examples, confusion matrix, usage
and the scenarios behind each change) takes about 11 MB once parsed; a year of three models' nights would not
fit in memory. The verdict, the standing and the time are read from the whole summary first (nights.py).

Dropped: the cue-invariance block and the scenario lists (read by the verdict only), and of each case what
neither page reads: its examples, confusion matrix and intervals, usage, notes, the project's own values and,
of each change against the baseline (DirErr's, soft DirErr's, the toward-cue rate's), everything but its
label, size, p-value and whether it failed (the scenarios, examples, intervals and power behind it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TOP_DROPPED = ("invariance", "scenario_ids", "protocols", "usage")
CASE_DROPPED = (
    "examples",
    "usage",
    "own_values",
    "own_tests",
    "protocol_notes",
    "decided",
    "samples",
    "unreadable",
)
SCORES_DROPPED = ("confusion", "dir_err_ci")
CHANGE_KEPT = ("label", "difference", "p_value", "significant", "breach", "measure")
"""Of a change against the baseline, what the pages read: its size, its p-value and whether it failed."""


def _scalars(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if not isinstance(v, (list, dict))}


def _change(change: Any) -> Any:
    return {k: change[k] for k in CHANGE_KEPT if k in change} if isinstance(change, Mapping) else change


def _baseline(block: Any) -> Any:
    """The scalars of a case's ``baseline`` block, and of each of its tests (DirErr and soft DirErr per label,
    the toward-cue rate: what the gate ranks a failed case by, report/gate_order.py) what CHANGE_KEPT names."""
    if not isinstance(block, Mapping):
        return block
    kept = _scalars(block)
    for key in ("changes", "soft"):
        if isinstance(changes := block.get(key), Mapping):
            kept[key] = {y: _change(c) for y, c in changes.items()}
    if isinstance(cue := block.get("cue"), Mapping):
        kept["cue"] = _change(cue)
    return kept


def _case(case: Any) -> Any:
    if not isinstance(case, Mapping):
        return case
    kept = {k: v for k, v in case.items() if k not in CASE_DROPPED}
    if isinstance(kept.get("scores"), Mapping):
        kept["scores"] = {k: v for k, v in kept["scores"].items() if k not in SCORES_DROPPED}
    if "baseline" in kept:
        kept["baseline"] = _baseline(kept["baseline"])
    return kept


def reduced(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with what the site's pages do not read left out (see the module's docstring)."""
    kept = {k: v for k, v in summary.items() if k not in TOP_DROPPED}
    for key in ("cases", "generated_cases"):
        if isinstance(kept.get(key), list):
            kept[key] = [_case(c) for c in kept[key]]
    generated = kept.get("generated")
    if isinstance(generated, Mapping):
        kept["generated"] = {k: v for k, v in generated.items() if k != "scenario_ids"}
    return kept
