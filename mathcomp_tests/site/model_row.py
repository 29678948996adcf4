"""What the index says of a model beyond its newest night's verdict: since when it has not passed, its newest
night's worst failed case (the case and the number), and the cases its newest night could not judge (AT
CHANCE: answered no better than one constant answer; could not see a rise: underpowered against its
baseline, verdict/power.py). Everything is read with ``.get`` and checked for its type: these are fields
history does not check, and records written before them lack them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..listing import few
from ..scoring.metrics import percent
from ..types import LABELS
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


@dataclass(frozen=True)
class Rise:
    case: str
    amount: float
    """How far the case rose: over its baseline (a paired change), else over its ceiling."""
    text: str


def _number(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return float(value) if ok and abs(value) != float("inf") else None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _rises(case: Mapping[str, Any]) -> list[Rise]:
    """Each way ``case`` rose: DirErr over its baseline (the paired change), else a share over its ceiling."""
    name = str(case.get("case"))
    compared = _dict(case.get("baseline"))
    changes = _dict(compared.get("changes")) if compared.get("status") == "compared" else {}
    found = [
        Rise(name, d, f"DirErr({y}) {100 * d:+.1f} points over its baseline")
        for y, change in changes.items()
        if (d := _number(_dict(change).get("difference"))) is not None and d > 0
    ]
    if found:
        return found
    scores, ceilings = _dict(case.get("scores")), _dict(case.get("ceilings"))
    dir_err, limits = _dict(scores.get("dir_err")), _dict(ceilings.get("dir_err"))
    pairs = [(f"DirErr({y})", dir_err.get(y), limits.get(y)) for y in LABELS]
    pairs += [
        (n, scores.get(k), ceilings.get(k))
        for n, k in (("invalid", "invalid_rate"), ("errors", "error_rate"))
    ]
    return [
        Rise(name, v - c, f"{what} {percent(v)} over its ceiling {percent(c)}")
        for what, value, ceiling in pairs
        if (v := _number(value)) is not None and (c := _number(ceiling)) is not None and v > c
    ]


def worst_case(summary: Mapping[str, Any]) -> str:
    """The night's failed case that rose the most, named with the number (``case: DirErr(less) +12.0 points
    over its baseline``); a failed case with no number (it errored) when none rose; "" when none failed."""
    every = [*(summary.get("cases") or ()), *(summary.get("generated_cases") or ())]
    failed = [c for c in every if isinstance(c, dict) and c.get("passed") is False]
    rises = [r for c in failed for r in _rises(c)]
    if rises:
        worst = max(rises, key=lambda r: r.amount)
        return f"{worst.case}: {worst.text}"
    return f"{failed[0].get('case')}: failed" if failed else ""


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
