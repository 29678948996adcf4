"""The order the gate reads a run's cases in, for the item diff: the failed cases first, the one whose largest
rise over the baseline is largest first (a case that failed a ceiling alone: by how far it is over), then the
cases that passed. Read from summary.json's plain dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..scoring.item_changes import CaseChanges
from ..verdict.of_run import every_case
from .headline import ceiling_rows, rises


@dataclass(frozen=True)
class Standing:
    """How the gate read one case: failed or not, and the size it is ranked by (a fraction: the largest rise
    over the baseline, else the largest distance over a ceiling; 0 for a case that passed)."""

    case: str
    failed: bool
    size: float
    why: str
    """``DirErr(more) +73.5 points over the baseline``, ``DirErr(less) 72.0% over its ceiling 65.0%``,
    ``passed``, ``failed (another check)``."""


def _points(value: float) -> str:
    return f"{100 * value:+.1f} points"


def standings(summary: Mapping[str, Any] | None) -> dict[str, Standing]:
    """Each case of ``summary`` (test_generated's too) by id, as the gate read it; {} without a summary."""
    if not summary:
        return {}
    found: dict[str, Standing] = {}
    for rise in rises(summary):  # largest first: the first of a case is its largest
        if rise.case not in found:
            size = float(rise.change.get("difference") or 0.0)
            why = f"{rise.name} {_points(size)} over the baseline" + (" (Holm)" if rise.holm_only else "")
            found[rise.case] = Standing(rise.case, True, size, why)
    for case, metric, value, ceiling, _ in sorted(
        ceiling_rows(every_case(summary)), key=lambda row: -((row[2] or 0.0) - row[3])
    ):
        if case not in found:
            over = (value or 0.0) - ceiling
            shown = "n/a" if value is None else f"{100 * value:.1f}%"
            found[case] = Standing(
                case, True, over, f"{metric} {shown} over its ceiling {100 * ceiling:.1f}%"
            )
    for entry in every_case(summary):
        name = str(entry["case"])
        if name in found:
            continue
        failed = entry.get("passed") is False or bool(entry.get("error"))
        found[name] = Standing(name, failed, 0.0, "failed (another check)" if failed else "passed")
    return found


def rank(standing: Standing | None) -> tuple[int, float]:
    """Sort key: failed cases first, the largest size first; cases the summary does not name last."""
    if standing is None:
        return (2, 0.0)
    return (0 if standing.failed else 1, -standing.size)


def ordered(case_ids: Sequence[str], summary: Mapping[str, Any] | None) -> list[str]:
    """``case_ids`` in the gate's order (a stable sort: ties keep the order given)."""
    found = standings(summary)
    return sorted(case_ids, key=lambda c: rank(found.get(c)))


def in_gate_order(changes: Sequence[CaseChanges], summary: Mapping[str, Any] | None) -> list[CaseChanges]:
    """Each case's changes in the gate's order (``ordered``); as given without a summary to read it from."""
    order = {c: i for i, c in enumerate(ordered([c.case for c in changes], summary))}
    return sorted(changes, key=lambda c: order[c.case])
