"""The report's section under the verdict on what a pass does not say, each case named: the neutral cases
answered AT CHANCE (summary.json's ``at_chance``: verdict/chance.py) and the cases that could not see a rise
(the ``power`` block's ``underpowered``: verdict/power.py). From summary.json's plain dicts; every text is
escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..listing import counted
from ..scoring.metrics import percent
from ..verdict import chance, power
from .headline import SHOWN

STYLE = """<style>
.mathcomp-unseen {border: 1px solid #c9a227; border-radius: 4px; padding: 8px 14px; margin: 0 0 18px;
  background: #fffbea; max-width: 1100px}
.mathcomp-unseen h3 {margin: 8px 0 4px; font-size: 15px; color: #222}
.mathcomp-unseen p {margin: 4px 0}
.mathcomp-unseen table {border-collapse: collapse; font-size: 13px; margin: 4px 0 8px}
.mathcomp-unseen th, .mathcomp-unseen td {border: 1px solid #ccc; padding: 3px 8px; text-align: left;
  color: #222; background: #fff}
.mathcomp-unseen th {background: #f3f3f3}
.mathcomp-unseen summary {cursor: pointer; font-size: 13px; color: #444}
</style>"""


def section_html(summary: Mapping[str, Any]) -> str:
    """Both lists, each case named; empty when no case was at chance and every compared case saw a rise."""
    at_chance = chance.entries(summary)
    block = summary.get("power") or {}
    weak, unearned = power.underpowered(summary)
    if not (at_chance or weak):
        return ""
    parts = [STYLE, '<div class="mathcomp-unseen">']
    if at_chance:
        parts.append(f"<h3>AT CHANCE: {counted(len(at_chance), 'neutral case')}</h3>")
        parts.append(
            "<p>Answered no better than always giving one answer: DirErr ceilings set around such a model's "
            "own numbers pass it while it knows none of the arithmetic.</p>"
        )
        rows = [
            [str(e.get("case")), percent(e.get("accuracy")), str(e.get("label")), percent(e.get("constant"))]
            for e in at_chance
        ]
        parts.append(_table(("case", "accuracy", "always answering", "would be right on"), rows))
    if weak:
        heading = f"{len(weak)} of {block.get('compared', len(weak))} compared cases {power.unseen(block)}"
        parts.append(f"<h3>{escape(heading)}</h3>")
        parts.append(
            "<p>At 80% power, on these labels: each with the smallest rise one of its tests sees, in points. "
            "Against this baseline, a pass does not say such a rise did not happen.</p>"
        )
        head: tuple[str, ...] = ("case", "labels it could not see")
        rows = [
            [str(w.get("case")), power.labels_text(w.get("labels") or [], w.get("seen") or {})] for w in weak
        ]
        if block.get("required"):
            head += ("power required",)
            rows = [[*row, "yes" if row[0] in unearned else "no"] for row in rows]
        parts.append(_table(head, rows))
    parts.append("</div>")
    return "".join(parts)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of escaped texts; past ``SHOWN`` rows (and two more), the rest fold away."""
    top = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
    lines = ["<tr>" + "".join(f"<td>{escape(t)}</td>" for t in row) + "</tr>" for row in rows]
    if len(lines) <= SHOWN + 2:
        return f"<table>{top}{''.join(lines)}</table>"
    return (
        f"<table>{top}{''.join(lines[:SHOWN])}</table>"
        f"<details><summary>{len(lines) - SHOWN} more</summary><table>{top}{''.join(lines[SHOWN:])}</table>"
        "</details>"
    )
