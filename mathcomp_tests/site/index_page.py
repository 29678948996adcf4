"""The site's index.html: one row per model, its newest night first (INCOMPLETE, then new failures, then
known failures only, then passed), each with its verdict (and the cases it could not judge), when it ran,
since when the model has not passed, its worst failed case and links to that night's report and diff; then
every night of each model, newest first. The title tallies the verdicts. Plain HTML and inline CSS, no
script; every link relative; everything a model or a record wrote is escaped."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from ..listing import counted
from ..record.night import DIFF
from ..records import results
from . import model_row
from .nights import FAILED, INCOMPLETE, KNOWN_ONLY, PASSED, STANDINGS, Night

INDEX = "index.html"
HISTORY = "history.html"
NIGHTS = "nights"
"""The site's folder of nights: nights/<run-id>/report.html and diff.html, copied from the records."""

BADGES = {
    INCOMPLETE: ("incomplete", "the night ended before the suite finished"),
    FAILED: ("failed", "new failures (or failures with no baseline to call them known)"),
    KNOWN_ONLY: ("known", "every failure fails on the base too"),
    PASSED: ("passed", "every case passed"),
}
"""Each standing's CSS class and what it means (the legend)."""

STYLE = """<style>
body {font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px 32px; color: #1f2328;
  background: #fff; line-height: 1.45; max-width: 1200px}
h1 {font-size: 24px; margin: 0 0 4px} h2 {font-size: 19px; margin: 28px 0 8px}
h3 {font-size: 15px; margin: 20px 0 6px; font-family: ui-monospace, monospace; overflow-wrap: anywhere}
p.lead {color: #57606a; margin: 0 0 16px}
table {border-collapse: collapse; width: 100%; table-layout: fixed; font-size: 14px; margin: 4px 0 12px}
th, td {border-bottom: 1px solid #d8dee4; padding: 7px 10px; text-align: left; vertical-align: top}
th {background: #f6f8fa; font-weight: 600; border-top: 1px solid #d8dee4}
td.model, td.run {font-family: ui-monospace, monospace; font-size: 13px; overflow-wrap: anywhere}
td.when {font-size: 13px; font-variant-numeric: tabular-nums}
td.links > * {display: inline-block; white-space: nowrap; margin-right: 12px}
.badge {display: inline-block; min-width: 8.5em; padding: 2px 8px; border-radius: 4px; font-size: 12px;
  font-weight: 700; letter-spacing: .02em; text-align: center; margin-right: 8px}
.incomplete {background: #fff1c2; color: #6b4b00; border: 1px solid #d4a72c}
.failed {background: #ffe1e0; color: #8c1118; border: 1px solid #e5534b}
.known {background: #eef1f4; color: #3d4650; border: 1px solid #afb8c1}
.passed {background: #dcf5e3; color: #0f5323; border: 1px solid #4ac26b}
.line {color: #424a53; font-size: 13px}
.none {color: #8c959f}
td.since, td.worst {font-size: 13px; overflow-wrap: anywhere}
td.since .count {color: #57606a}
.mark {display: block; margin-top: 4px; font-size: 12px; color: #6b4b00; overflow-wrap: anywhere}
.mark strong {font-weight: 700}
a {color: #0b5fc4}
ul.legend {list-style: none; padding: 0; margin: 8px 0 0; font-size: 13px; color: #57606a}
ul.legend li {margin: 3px 0}
.skipped {border: 1px solid #d4a72c; background: #fffbea; padding: 8px 14px; margin: 12px 0; font-size: 13px}
.skipped ul {margin: 4px 0; padding-left: 18px} .skipped li {overflow-wrap: anywhere}
</style>"""


def _link(night: Night, page: str, text: str) -> str:
    if page not in night.pages:
        return f'<span class="none">no {escape(text)}</span>'
    href = f"{NIGHTS}/{quote(night.run_id)}/{page}"
    return f'<a href="{escape(href)}">{escape(text)}</a>'


def _since(nights: Sequence[Night]) -> str:
    found = model_row.failing_since(nights)
    if found is None:
        return ""
    night, count = found
    when = night.ran or night.run_id
    count_text = counted(count, "night")
    shown = _link(night, results.REPORT, when) if results.REPORT in night.pages else escape(when)
    return f'{shown} <span class="count">({escape(count_text)})</span>'


def _marks(night: Night) -> str:
    return "".join(
        f'<span class="mark"><strong>{escape(mark)}</strong>: {escape(cases)}</span>'
        for mark, cases in model_row.marks(night.summary)
    )


LATEST = {"verdict": 26, "model": 14, "ran": 10, "run": 13, "failing since": 12, "worst case": 17, "pages": 8}
EVERY = {"verdict": 50, "ran": 14, "run": 24, "pages": 12}
"""Each table's columns and their widths (percent), the same for every model's table so that they line up."""
CLASSES = {
    "verdict": "verdict",
    "model": "model",
    "ran": "when",
    "run": "run",
    "failing since": "since",
    "worst case": "worst",
    "pages": "links",
}
"""Each column's CSS class."""


def _verdict(night: Night) -> str:
    css, meaning = BADGES[night.standing]
    return (
        f'<span class="badge {css}" title="{escape(meaning)}">{escape(night.standing)}</span>'
        f'<span class="line">{escape(night.verdict)}</span>'
    )


def _cells(night: Night) -> dict[str, str]:
    """The cells both tables show of a night, by column: its verdict, when it ran, its run and its pages."""
    return {
        "verdict": _verdict(night),
        "ran": escape(night.ran or "unknown"),
        "run": escape(night.run_id),
        "pages": _link(night, results.REPORT, "report") + _link(night, DIFF, "diff"),
    }


def _row(columns: dict[str, int], cells: dict[str, str]) -> str:
    return "<tr>" + "".join(f'<td class="{CLASSES[name]}">{cells[name]}</td>' for name in columns) + "</tr>"


def _latest(nights: Sequence[Night]) -> str:
    """The row of a model: its newest night, since when it has not passed and its worst failed case."""
    night = nights[0]
    cells = _cells(night)
    cells |= {
        "verdict": cells["verdict"] + _marks(night),
        "model": escape(night.model),
        "failing since": _since(nights),
        "worst case": escape(model_row.worst_case(night.summary)),
    }
    return _row(LATEST, cells)


def _head(columns: dict[str, int]) -> str:
    return "<tr>" + "".join(f'<th style="width:{w}%">{escape(n)}</th>' for n, w in columns.items()) + "</tr>"


def _skipped(skipped: Sequence[str]) -> str:
    if not skipped:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in skipped)
    return f'<div class="skipped"><strong>{counted(len(skipped), "record")} skipped:</strong><ul>{items}</ul></div>'


def page(models: Sequence[Sequence[Night]], skipped: Sequence[str]) -> str:
    """index.html for ``models`` (each model's nights, newest first, the models in the index's order)."""
    read = sum(len(m) for m in models)
    counts = f"{counted(read, 'night')} of {counted(len(models), 'model')} read, {len(skipped)} skipped."
    legend = "".join(
        f'<li><span class="badge {css}">{escape(name)}</span>{escape(meaning)}</li>'
        for name, (css, meaning) in BADGES.items()
    )
    latest = "".join(_latest(nights) for nights in models)
    every = "".join(
        f"<h3>{escape(nights[0].model)}</h3><table>{_head(EVERY)}"
        + "".join(_row(EVERY, _cells(n)) for n in nights)
        + "</table>"
        for nights in models
    )
    body = (
        "<h1>MathComp nightly results</h1>"
        f'<p class="lead">{escape(counts)} <a href="{HISTORY}">History of every metric across nights</a></p>'
        f"{_skipped(skipped)}"
        "<h2>Latest night per model</h2>"
        f"<table>{_head(LATEST)}{latest}</table>"
        f'<ul class="legend">{legend}</ul>'
        f"<h2>Every night</h2>{every}"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title(models))}</title>{STYLE}</head><body>{body}</body></html>"
    )


def title(models: Sequence[Sequence[Night]]) -> str:
    """The site and where its models stand: ``MathComp nightly results: 1 FAILED, 2 PASSED``."""
    newest = [nights[0].standing for nights in models]
    tally = ", ".join(f"{newest.count(s)} {s}" for s in STANDINGS if s in newest)
    return f"MathComp nightly results: {tally}" if tally else "MathComp nightly results"
