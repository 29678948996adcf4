"""Could the gate see a rise? Each case against its baseline, label by label.

Every test against the baseline states the smallest rise it finds with 80% power (scoring/power.py for
DirErr and the toward-cue rate, scoring/soft_paired.py for soft DirErr), or that it cannot rise. A label is
*seen* when one of its tests (DirErr(y), or soft DirErr(y) under label scoring) sees a rise of
``detect_rise`` (thresholds.toml; 0.15 by default) or less; a case is *underpowered* when some label is not
seen. A run whose cases passed but were underpowered says so in its verdict, never as a plain PASS; with
``require_power`` (thresholds.toml) or --require-power it fails, as not earned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..scoring.changes import label_of, tests
from ..scoring.power import POWER

Case = Mapping[str, Any]


def seen(case: Case) -> dict[str, float | None]:
    """label -> the smallest rise one of its tests sees (None: no test of it can see a rise); empty
    when the case was not compared."""
    out: dict[str, float | None] = {}
    for name, change in tests(case.get("baseline")):
        if name.startswith("toward-cue rate"):
            continue
        label = label_of(name)
        mde = (change.get("power") or {}).get("mde")
        best = out.get(label)
        out[label] = mde if best is None else (best if mde is None else min(best, mde))
    return out


def blind(case: Case) -> list[str]:
    """The labels of ``case`` on which no test sees a rise of its ``detect_rise``."""
    target = detect_rise(case)
    return [y for y, mde in seen(case).items() if mde is None or mde > target]


def detect_rise(case: Case) -> float:
    from ..config.thresholds import DEFAULT_DETECT_RISE

    return float((case.get("ceilings") or {}).get("detect_rise", DEFAULT_DETECT_RISE))


def required(case: Case) -> bool:
    return bool((case.get("ceilings") or {}).get("require_power"))


def summary(cases: Sequence[Case], forced: bool = False) -> dict[str, Any] | None:
    """summary.json's ``power`` block (None when no case was compared): each compared case's smallest
    rise seen per label, the underpowered cases, and whether power was required (``forced``:
    --require-power)."""
    compared = [c for c in cases if seen(c)]
    if not compared:
        return None
    weak = sorted(((c, labels) for c in compared if (labels := blind(c))), key=_worst_first)
    targets = sorted({detect_rise(c) for c in compared})
    unearned = [c["case"] for c, _ in weak if forced or required(c)]
    return {
        "detect_rise": targets[0] if len(targets) == 1 else targets,
        "power": POWER,
        "compared": len(compared),
        "underpowered": [{"case": c["case"], "labels": labels, "seen": seen(c)} for c, labels in weak],
        "required": forced or any(required(c) for c in compared),
        "not_earned": bool(unearned),
        "not_earned_by": unearned,
    }


def _worst_first(weak: tuple[Case, list[str]]) -> tuple[int, float]:
    """What the run could not see, worst first: a label that cannot rise at all, then the largest rise a
    blind label needs to be seen."""
    case, labels = weak
    found = seen(case)
    needed = [found.get(y) for y in labels]
    if any(mde is None for mde in needed):
        return (0, 0.0)
    return (1, -max(float(mde or 0) for mde in needed))


def underpowered(summary: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], set[str]]:
    """A summary.json's underpowered cases (its ``power`` block's, worst first; none for a summary without
    one) and the names of those whose pass power was required for (``not_earned_by``)."""
    block = summary.get("power") or {}
    weak = [w for w in block.get("underpowered") or [] if isinstance(w, Mapping)]
    return weak, {str(c) for c in block.get("not_earned_by") or []}


def phrase(block: Mapping[str, Any] | None) -> str:
    """``12 could not see a rise under 15 points``; empty when every compared case could."""
    if not block or not block.get("underpowered"):
        return ""
    return f"{len(block['underpowered'])} {unseen(block)}"


def unseen(block: Mapping[str, Any]) -> str:
    """``could not see a rise under 15 points`` (``under their detect_rise`` where the cases' differ)."""
    target = block["detect_rise"]
    under = f"{100 * target:g} points" if isinstance(target, (int, float)) else "their detect_rise"
    return f"could not see a rise under {under}"


def labels_text(labels: Sequence[str], found: Mapping[str, float | None]) -> str:
    """``less (sees +21.5), equal (cannot rise)``: each label with the smallest rise seen, in points."""
    return ", ".join(
        f"{y} ({'cannot rise' if found.get(y) is None else f'sees +{100 * float(found[y] or 0):.1f}'})"
        for y in labels
    )


def case_text(case: Case) -> str:
    """``could not see a rise under 15 points on less (sees +21.5), equal (cannot rise)``."""
    return f"could not see a rise under {100 * detect_rise(case):g} points on {labels_text(blind(case), seen(case))}"
