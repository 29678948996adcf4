"""DirErr heat-maps as HTML tables: framings down, position x identity across (the paper's Figure 2 and
Table 1 layouts), one table per answer format and label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..types import FRAMINGS, LABELS


def _shade(value: float | None) -> str:
    if value is None:
        return ""
    alpha = min(1.0, value / 0.5)
    return f' style="background:rgba(220,53,69,{alpha:.2f})"'


def heatmaps_html(cases: Sequence[Mapping[str, Any]]) -> str:
    """Every format's DirErr(y) grid; empty when the run has too few cases to form one."""
    cases = [c for c in cases if c["scores"] is not None]  # a case that raised has no numbers to show
    formats = list(dict.fromkeys(c["format"] for c in cases))
    parts = []
    for fmt in formats:
        chosen = [c for c in cases if c["format"] == fmt]
        columns = list(dict.fromkeys((c["position"], c["identity"]) for c in chosen))
        framings = [f for f in FRAMINGS if any(c["framing"] == f for c in chosen)]
        if len(chosen) < 2:
            continue
        by_key = {(c["framing"], c["position"], c["identity"]): c for c in chosen}
        for label in LABELS:
            head = "".join(f"<th>{escape(p)}<br>{escape(i)}</th>" for p, i in columns)
            rows = []
            for framing in framings:
                cells = []
                for position, identity in columns:
                    case = by_key.get((framing, position, identity))
                    value = None if case is None else case["scores"]["dir_err"][label]
                    shown = "" if value is None else f"{100 * value:.1f}"
                    cells.append(f"<td{_shade(value)}>{shown}</td>")
                rows.append(f"<tr><th>{escape(framing)}</th>{''.join(cells)}</tr>")
            parts.append(
                f'<div class="mathcomp-heatmap"><h3>DirErr({escape(label)}) %, format {escape(fmt)}</h3>'
                f"<table><tr><th>framing</th>{head}</tr>{''.join(rows)}</table></div>"
            )
    return "".join(parts)
