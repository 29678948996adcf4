"""The report's heat-maps and bars, drawn as HTML: the paper's Figure 2 (DirErr per framing and position),
the change against a baseline, its Table 1 (DirErr per identity), and DirErr per scenario category.

Tables with coloured cells rather than pictures: drawing costs milliseconds instead of seconds a run, the
numbers stay text a reader can select, search and have read aloud, and every text is escaped here. Colour
scales are fixed (0 to 100 % for DirErr, -50 to +50 points for a change) so that runs compare at a glance.
Every function takes plain case summaries (summary.json's ``cases``) or pooled numbers, so a finished run
folder can be drawn again without a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

from ..types import ALL_FRAMINGS as FRAMINGS
from .headline import label_change

Case = Mapping[str, Any]
Pooled = Mapping[str, Mapping[str, tuple[float, float, float] | None]]
PANEL_ORDER = ("less", "equal", "more")
"""The paper's Figure 2 order of error directions."""
SHORT = {f: f.replace("direct-", "dir-").replace("indirect-", "ind-") for f in FRAMINGS}
REDS = ("#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d")
"""ColorBrewer's Reds (9 classes), light to dark: DirErr from 0 to 100 %."""
RED_BLUE = (
    "#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
    "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f",
)  # fmt: skip
"""ColorBrewer's RdBu (11 classes), blue to red: a change from -50 to +50 points."""
LABEL_COLOURS = {"less": "#1f77b4", "equal": "#7f7f7f", "more": "#d62728"}

STYLE = """<style>
.mathcomp-chart {margin: 6px 0 14px}
.mathcomp-chart .panels {display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: flex-start}
.mathcomp-chart table {border-collapse: separate; border-spacing: 2px}
.mathcomp-chart caption {text-align: left; font-weight: bold; font-size: 13px; padding: 2px 0 4px}
.mathcomp-chart th {font-weight: normal; font-size: 12px; padding: 1px 6px; color: #333; white-space: nowrap}
.mathcomp-chart td.cell {min-width: 58px; height: 38px; padding: 1px 3px; text-align: center; font-size: 13px;
  font-variant-numeric: tabular-nums; border-radius: 2px}
.mathcomp-chart.dense td.cell {min-width: 44px; height: 22px; font-size: 12px}
.mathcomp-chart td.cell small {display: block; font-size: 10px}
.mathcomp-chart td.fail {box-shadow: inset 0 0 0 3px #111111, inset 0 0 0 5px #ffffff; font-weight: bold}
.mathcomp-chart td.changed {outline: 1.5px dashed #444444; outline-offset: -5px}
.mathcomp-chart td.na {background: #eeeeee; color: #777777}
.mathcomp-chart .scale {display: flex; align-items: center; gap: 6px; font-size: 11px; color: #444; margin: 4px 0}
.mathcomp-chart .scale span.bar {display: inline-block; width: 180px; height: 10px; border: 1px solid #bbb}
.mathcomp-chart .note {font-size: 11px; color: #555; margin: 2px 0}
.mathcomp-chart td.bar {padding: 2px 8px 2px 0; font-size: 11px; font-variant-numeric: tabular-nums;
  white-space: nowrap}
.mathcomp-chart .track {position: relative; display: inline-block; width: 150px; height: 14px;
  background: #f3f3f3; vertical-align: middle; margin-right: 6px}
.mathcomp-chart .track .fill {position: absolute; left: 0; top: 2px; bottom: 2px}
.mathcomp-chart .track .ci {position: absolute; top: 6px; height: 2px; background: #222}
.mathcomp-chart .track .base {position: absolute; top: -2px; bottom: -2px; width: 3px; margin-left: -1px;
  background: #000}
</style>"""
"""Once per page, before the first chart (sections.py puts it there)."""


def _colour(stops: Sequence[str], x: float) -> str:
    """The colour at ``x`` in [0, 1] along ``stops``, interpolated in RGB."""
    x = min(1.0, max(0.0, x)) * (len(stops) - 1)
    i = min(int(x), len(stops) - 2)
    t = x - i
    a, b = (tuple(int(s[k : k + 2], 16) for k in (1, 3, 5)) for s in (stops[i], stops[i + 1]))
    return "#" + "".join(f"{round(p + (q - p) * t):02x}" for p, q in zip(a, b, strict=True))


def _scale(stops: Sequence[str], low: str, high: str, label: str) -> str:
    gradient = ", ".join(stops)
    return (
        f'<div class="scale">{escape(low)}<span class="bar" style="background: linear-gradient(to right, '
        f'{gradient})"></span>{escape(high)} <span>{escape(label)}</span></div>'
    )


def _cell(value: float | None, note: str, title: str, *, diverging: bool, marks: str = "") -> str:
    """One coloured cell: the value in percent (points for a change), a small note under it."""
    if value is None:
        return f'<td class="cell na" title="{escape(title)}">n/a</td>'
    pct = 100 * value
    if diverging:
        background, strong, text = _colour(RED_BLUE, (pct + 50) / 100), abs(pct) > 30, f"{pct:+.1f}"
    else:
        background, strong, text = _colour(REDS, pct / 100), pct > 55, f"{pct:.1f}"
    colour = "#ffffff" if strong else "#000000"
    small = f"<small>{escape(note)}</small>" if note else ""
    classes = " ".join(["cell", *marks.split()])
    return (
        f'<td class="{classes}" style="background:{background};color:{colour}" title="{escape(title)}">'
        f"{escape(text)}{small}</td>"
    )


def _grid(
    title: str,
    row_names: Sequence[str],
    column_names: Sequence[str],
    cells: Sequence[Sequence[str]],
    *,
    row_header: bool = True,
) -> str:
    """One panel: a table with its title, column names across and (with ``row_header``) row names down."""
    corner = "<th></th>" if row_header else ""
    head = corner + "".join(f'<th scope="col">{escape(c)}</th>' for c in column_names)
    body = "".join(
        "<tr>"
        + (f'<th scope="row">{escape(name)}</th>' if row_header else "")
        + "".join(row)
        + "</tr>"
        for name, row in zip(row_names, cells, strict=True)
    )
    return f"<table><caption>{escape(title)}</caption><tr>{head}</tr>{body}</table>"


def _chart(caption: str, panels: Sequence[str], footer: str, dense: bool = False) -> str:
    return (
        f'<div class="mathcomp-chart{" dense" if dense else ""}"><div class="note"><b>{escape(caption)}</b></div>'
        f'<div class="panels">{"".join(panels)}</div>{footer}</div>'
    )


Cell = Callable[[str, str, "Case | None", str], str]
"""(row name, framing, the case or None, label) -> one cell's HTML."""


def _framing_panels(rows: Sequence[tuple[str, Mapping[str, Case]]], title: str, cell: Cell) -> list[str]:
    """One panel per error direction (``title`` formatted with the label), framings across, ``rows`` down."""
    framings = [f for f in FRAMINGS if any(f in cases for _, cases in rows)]
    return [
        _grid(
            title.format(label=label),
            [name for name, _ in rows],
            [SHORT[f] for f in framings],
            [[cell(name, f, cases.get(f), label) for f in framings] for name, cases in rows],
        )
        for label in PANEL_ORDER
    ]


def direction_heatmaps(rows: Sequence[tuple[str, Mapping[str, Case]]], caption: str) -> str:
    """The paper's Figure 2: one panel per error direction, framings across, ``rows`` down.

    ``rows`` pairs a row name (a position, or a model when runs are combined) with its cases by framing.
    Each cell shows its ceiling under the value; a cell above its ceiling (its case fails) is bold in a
    black-and-white frame that shows on light and dark cells alike.
    """

    def cell(name: str, framing: str, case: Case | None, label: str) -> str:
        value = None if case is None else case["scores"]["dir_err"][label]
        ceiling = None if case is None else case["ceilings"]["dir_err"][label]
        fails = _fails(case, label)
        note = "" if ceiling is None else f"≤{100 * ceiling:.0f}"
        title = f"{name}, {framing}: DirErr({label}) " + (
            "not run" if value is None else f"{100 * value:.1f}%, ceiling {note[1:]}%"
        )
        title += ", above it: the case fails" if fails else ""
        return _cell(value, note, title, diverging=False, marks="fail" if fails else "")

    footer = _scale(REDS, "0", "100", "DirErr %") + (
        '<div class="note">DirErr(y): the share answered y among items whose truth is not y. Small number: '
        "the ceiling; a thick black-and-white frame and bold: above it (the case fails).</div>"
    )
    return _chart(caption, _framing_panels(rows, "DirErr({label}) %", cell), footer)


def delta_heatmaps(rows: Sequence[tuple[str, Mapping[str, Case]]], caption: str) -> str:
    """Candidate minus baseline, per direction: framings across, ``rows`` down.

    A rise the paired test finds significant and above ``max_increase`` fails its case: thick frame, bold.
    Any other significant change (a smaller rise, or a fall: an improvement) has a thin dashed frame.
    """

    def cell(name: str, framing: str, case: Case | None, label: str) -> str:
        change = label_change(case, label)
        if change is None:
            return _cell(None, "", f"{name}, {framing}: no baseline", diverging=True)
        marks = "fail" if change["breach"] else ("changed" if change["significant"] else "")
        verdict = {"fail": ", a significant rise above max_increase: the case fails"}.get(marks, "")
        verdict = verdict or (", significant" if marks else ", not significant")
        title = (
            f"{name}, {framing}: DirErr({label}) {100 * change['difference']:+.1f} points against the "
            f"baseline, p={change['p_value']:.2g}{verdict}"
        )
        return _cell(change["difference"], f"p={change['p_value']:.2g}", title, diverging=True, marks=marks)

    footer = _scale(RED_BLUE, "-50", "+50", "candidate - baseline, points") + (
        '<div class="note">Red: DirErr rose; blue: it fell. A thick black-and-white frame and bold: a '
        "significant rise above max_increase (the case fails). A thin dashed frame: a significant change "
        "that does not fail it.</div>"
    )
    return _chart(caption, _framing_panels(rows, "change in DirErr({label}), points", cell), footer)


def _fails(case: Case | None, label: str) -> bool:
    """The case's DirErr(label) is above its ceiling (the case fails on it)."""
    return case is not None and f"DirErr({label})" in case.get("breaches", [])


def identity_table(cases: Sequence[Case], identities: Sequence[str], caption: str) -> str:
    """The paper's Table 1: rows framing x position, columns identities; one panel per direction."""
    by_key = {(c["framing"], c["position"], c["identity"]): c for c in cases}
    keys = list(dict.fromkeys((c["framing"], c["position"]) for c in cases))
    keys.sort(key=lambda k: (FRAMINGS.index(k[0]), k[1]))
    panels = []
    for n, label in enumerate(PANEL_ORDER):
        cells = []
        for framing, position in keys:
            row = []
            for identity in identities:
                case = by_key.get((framing, position, identity))
                value = None if case is None else case["scores"]["dir_err"][label]
                fails = _fails(case, label)
                title = f"{framing} {position}, {identity}: DirErr({label}) " + (
                    "not run" if value is None else f"{100 * value:.1f}%"
                )
                title += ", above its ceiling: the case fails" if fails else ""
                row.append(_cell(value, "", title, diverging=False, marks="fail" if fails else ""))
            cells.append(row)
        names = [f"{SHORT[f]} {p}" for f, p in keys]
        panels.append(_grid(f"DirErr({label}) %", names, list(identities), cells, row_header=n == 0))
    footer = _scale(REDS, "0", "100", "DirErr %") + (
        '<div class="note">A thick black-and-white frame and bold: above the ceiling (the case fails).</div>'
    )
    return _chart(caption, panels, footer, dense=True)


def category_bars(categories: Pooled, caption: str, baseline: Pooled | None = None) -> str:
    """Pooled DirErr per scenario category and direction, with cluster-bootstrap 95% intervals.

    ``categories`` maps a category to label -> (value, low, high), or None when no item counts;
    ``baseline``, the same for the baseline's answers, is drawn as a black tick across each bar.
    """
    names = sorted(categories)
    rows = []
    for name in names:
        cells = []
        for label in PANEL_ORDER:
            entry = categories[name].get(label)
            if entry is None:
                cells.append('<td class="bar">n/a</td>')
                continue
            value, low, high = entry
            base = (baseline or {}).get(name, {}).get(label)
            tick = f'<span class="base" style="left:{100 * base[0]:.1f}%"></span>' if base is not None else ""
            text = f"{100 * value:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
            title = f"{name}: DirErr({label}) {text}" + (
                f"; the baseline {100 * base[0]:.1f}%" if base is not None else ""
            )
            cells.append(
                f'<td class="bar" title="{escape(title)}"><span class="track">'
                f'<span class="fill" style="width:{100 * value:.1f}%;background:{LABEL_COLOURS[label]}"></span>'
                f'<span class="ci" style="left:{100 * low:.1f}%;width:{100 * (high - low):.1f}%"></span>'
                f"{tick}</span>{escape(text)}</td>"
            )
        rows.append(f'<tr><th scope="row">{escape(name)}</th>{"".join(cells)}</tr>')
    head = "<tr><th></th>" + "".join(f'<th scope="col">DirErr({y}) %, 95% CI</th>' for y in PANEL_ORDER)
    legend = "Bars: DirErr pooled over the run's cases; black line: its 95% interval" + (
        "; black tick: the baseline's answers on the same items." if baseline else "."
    )
    table = f"<table>{head}</tr>{''.join(rows)}</table>"
    return _chart(caption, [table], f'<div class="note">{escape(legend)}</div>')
