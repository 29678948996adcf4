"""What the index says of a model beyond its newest night's verdict: since when it has not passed, its newest
night's worst failed case (the case and the number, as the gate ranks it: report/gate_order.py), and the
cases its newest night could not judge (AT CHANCE: answered no better than one constant answer; could not see
a rise: underpowered against its baseline, verdict/power.py). The marks are read with ``.get`` and checked
for their type: these are fields history does not check, and records written before them lack them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..listing import few
from ..report import gate_order
from .nights import PASSED, Night

MARKED = 3
"""Case names a mark lists before "and N more"."""


def failing_since(nights: Sequence[Night]) -> tuple[Night, int] | None:
    """The oldest night of the unbroken run of nights that did not pass ending at the newest (``nights``:
    newest first), and how many nights that run holds; None when the newest passed."""
    streak = []
    for night in nights:
        if night.standing == PASSED:
            break
        streak.append(night)
    return (streak[-1], len(streak)) if streak else None


def worst_case(summary: Mapping[str, Any]) -> str:
    """The night's worst failed case as the gate ranks it (report/gate_order.py: the largest rise over the
    baseline, or how far over a ceiling, the item diff's first row), named with why it failed (``case:
    DirErr(less) +12.0 points over the baseline``); "" when none failed, or when the record holds a field of a
    shape the gate never wrote (history does not check the breaches and ceilings this reads)."""
    try:
        found = [s for s in gate_order.standings(summary).values() if s.failed]
    except (AttributeError, KeyError, TypeError, ValueError):
        return ""
    if not found:
        return ""
    worst = min(found, key=gate_order.rank)
    return f"{worst.case}: {worst.why}"


def _cases(items: Any) -> list[str]:
    listed = items if isinstance(items, list) else []
    return [str(i["case"]) for i in listed if isinstance(i, dict) and isinstance(i.get("case"), str)]


def marks(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(the mark, the cases it names): AT CHANCE (summary.json's ``at_chance``) and could not see a rise
    (``power.underpowered``); none where the record has neither."""
    power = summary.get("power")
    found = [
        ("AT CHANCE", _cases(summary.get("at_chance"))),
        ("could not see a rise", _cases(power.get("underpowered") if isinstance(power, dict) else None)),
    ]
    return [(mark, few(cases, MARKED)) for mark, cases in found if cases]
