"""The report's figure sections: the HTML charts of charts.py, each in a labelled figure with a caption
(the page stays one file that opens from disk). Every text is escaped."""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..types import FRAMINGS
from . import charts, pooled

Case = Mapping[str, Any]


def png_html(png: bytes, alt: str) -> str:
    """A PNG embedded as a data URI (the history page's matplotlib picture)."""
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}" style="max-width:100%;height:auto">'


def figure_html(chart: str, label: str, caption: str) -> str:
    """``chart`` (HTML from charts.py) as a figure named ``label`` for assistive technology."""
    return (
        f'<figure class="mathcomp-figure" role="group" aria-label="{escape(label)}">{chart}'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def run_figures_html(
    cases: Sequence[Case], records: Sequence[Mapping[str, Any]], baseline: pooled.Answers | None = None
) -> str:
    """Heat-maps per format, the change against a baseline, identity tables and category bars (with the
    baseline's answers, when given, beside each bar)."""
    cases = pooled.scored(cases)
    if not cases:
        return ""
    parts = [charts.STYLE, '<div class="mathcomp-figures"><h2>Figures</h2>']
    identities = list(dict.fromkeys(c["identity"] for c in cases))
    for fmt in dict.fromkeys(c["format"] for c in cases):
        chosen = [c for c in cases if c["format"] == fmt]
        rows = _rows_by_position(chosen, identities[0])
        parts.append(
            figure_html(
                charts.direction_heatmaps(rows, f"DirErr by framing and position, format {fmt}"),
                f"DirErr heat-map, format {fmt}",
                f"Format {fmt}, identity {identities[0]}: DirErr per direction (the paper's Figure 2 layout).",
            )
        )
        if any((c.get("baseline") or {}).get("status") == "compared" for c in chosen):
            parts.append(
                figure_html(
                    charts.delta_heatmaps(rows, f"Change against the baseline, format {fmt}"),
                    f"change against the baseline, format {fmt}",
                    f"Format {fmt}, identity {identities[0]}: DirErr of this run minus the baseline's on the "
                    "same items, in points; a thick frame marks a rise that fails its case.",
                )
            )
        if len(identities) > 1:
            parts.append(
                figure_html(
                    charts.identity_table(chosen, identities, f"DirErr by identity, format {fmt}"),
                    f"identity table, format {fmt}",
                    f"Format {fmt}: rows framing and position, columns identity (the paper's Table 1 layout).",
                )
            )
    categories = pooled.by_category(records)
    if categories:
        base = pooled.by_category(records, baseline) if baseline else None
        caption = "Pooled over every case of the run; 95% intervals from a bootstrap over scenarios."
        if base:
            caption += " Black ticks: the baseline's answers on the same items."
        elif any(c.get("baseline") for c in cases):
            caption += (
                " This run alone: the baseline's answers per item are not in its folder (a --baseline-model "
                "keeps none; a --baseline file that moved is not found)."
            )
        parts.append(
            figure_html(
                charts.category_bars(categories, "DirErr by scenario category, all cases pooled", base),
                "DirErr by category",
                caption,
            )
        )
    parts.append("</div>")
    return "".join(parts)


def _rows_by_position(cases: Sequence[Case], identity: str) -> list[tuple[str, dict[str, Case]]]:
    rows = []
    for position in dict.fromkeys(c["position"] for c in cases):
        by_framing = {
            c["framing"]: c for c in cases if c["position"] == position and c["identity"] == identity
        }
        if by_framing:
            rows.append((position, by_framing))
    return rows


def combined_figures_html(runs: Sequence[tuple[str, Sequence[Case]]]) -> str:
    """Models side by side: one heat-map row per run (and position), per format."""
    parts = [charts.STYLE, '<div class="mathcomp-figures"><h2>Runs side by side</h2>']
    formats = list(dict.fromkeys(c["format"] for _, cases in runs for c in cases))
    for fmt in formats:
        rows: list[tuple[str, dict[str, Case]]] = []
        for name, cases in runs:
            chosen = [c for c in pooled.scored(cases) if c["format"] == fmt]
            identity = next((c["identity"] for c in chosen), "std")
            positions = list(dict.fromkeys(c["position"] for c in chosen))
            for position, by_framing in _rows_by_position(chosen, identity):
                rows.append((name if len(positions) == 1 else f"{name} · {position}", by_framing))
        if rows:
            parts.append(
                figure_html(
                    charts.direction_heatmaps(rows, f"DirErr per run, format {fmt}"),
                    f"DirErr heat-map per run, format {fmt}",
                    f"Format {fmt}: one row per run; framings across ({', '.join(FRAMINGS)}).",
                )
            )
    parts.append("</div>")
    return "".join(parts)
