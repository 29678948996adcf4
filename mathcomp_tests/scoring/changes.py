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
    ]


def largest_change(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The change to show for ``cases`` (one case for a table row, all of them for the run): see above."""
    found = compared_changes(cases)
    breaches = [f for f in found if f["breach"]]
    if breaches:
        return max(breaches, key=lambda f: f["difference"])
    if any(f["difference"] > 0 for f in found):
        return max(found, key=lambda f: f["difference"])
    return min(found, key=lambda f: f["difference"], default=None)
