"""The one "largest change" of DirErr against the baseline that the terminal table, the report's case table
and summary.json's ``baseline.largest_change`` all show, so that a row never says one thing here and
another there.

Over the compared labels of the cases given, in this order: the largest rise that failed a case (a
breach: significant and over max_increase), so that a failing row shows the value that failed it; else
the largest rise; else the largest fall (every label fell or stayed). None when nothing was compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..types import LABELS

MEASURES = ("DirErr", "soft DirErr", "toward-cue rate")
"""What a case's tests against the baseline compare (scoring/paired.py LabelChange.measure)."""


def tests(block: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(``DirErr(less)``, change) for every test in a case summary's ``baseline`` block: DirErr per label,
    soft DirErr per label, the toward-cue rate; empty when the case was not compared."""
    if not block or block.get("status") != "compared":
        return []
    found = [(f"DirErr({y})", c) for y, c in (block.get("changes") or {}).items()]
    found += [(f"soft DirErr({y})", c) for y, c in (block.get("soft") or {}).items()]
    cue = block.get("cue")
    if cue:
        found.append((f"toward-cue rate({cue['label']})", cue))
    return found


def named(case: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
    """The change of test ``name`` (``soft DirErr(less)``) in a case summary; None where it was not compared."""
    for test, change in tests((case or {}).get("baseline")):
        if test == name and change.get("difference") is not None:
            return change
    return None


def label_of(name: str) -> str:
    """The label a test's name names: ``soft DirErr(less)`` -> ``less``."""
    return name.rpartition("(")[2].removesuffix(")")


def test_name(text: str) -> str | None:
    """``text`` when it names a test against the baseline (``soft DirErr(less)``), else None."""
    measure, sep, rest = text.partition("(")
    return text if sep and measure in MEASURES and rest[:-1] in LABELS and rest.endswith(")") else None


def compared_changes(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every compared label's change, as plain data: case, label, difference, breach, p_value, significant."""
    return [
        {
            "case": c["case"],
            "label": y,
            "difference": change["difference"],
            "breach": bool(change.get("breach")),
            "p_value": change.get("p_value"),
            "significant": bool(change.get("significant")),
        }
        for c in cases
        if (c.get("baseline") or {}).get("status") == "compared"
        for y, change in c["baseline"]["changes"].items()
        if change.get("difference") is not None
    ]  # DirErr's own changes: the table's change column is in DirErr points


def largest_change(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The change to show for ``cases`` (one case for a table row, all of them for the run): see above."""
    found = compared_changes(cases)
    breaches = [f for f in found if f["breach"]]
    if breaches:
        return max(breaches, key=lambda f: f["difference"])
    if any(f["difference"] > 0 for f in found):
        return max(found, key=lambda f: f["difference"])
    return min(found, key=lambda f: f["difference"], default=None)
