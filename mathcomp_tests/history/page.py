"""History as a regression view across nights: runs grouped by the model they test or were compared with
(by identity, not by the string as written), base and fine-tunes on shared axes (one axis per selection),
one line per case so that a rise in one case shows even where the means over cases hide it, the worst rise
named, where each case first failed, partial runs (-k, --limit) and incomplete nights marked. A plot shows
an axis's latest WINDOW runs by when they ran (time_axis; a year of nights would draw a picture no page
shows readably), its table every run; a number that is none (NaN) is missing; with ``links``, each run's
id and points link to its night's page (links). Plain summary.json dicts in (fields.py checked
their types); the page and the rows the command prints out."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..report import sections
from ..scoring.metrics import percent
from ..types import LABELS
from . import figures, groups, time_axis
from .groups import SELECTION_KEYS
from .links import STYLE as LINKS_STYLE
from .links import Links, overlay, run_cell

METRICS = ("DirErr(less)", "DirErr(more)", "DirErr(equal)", "accuracy", "invalid rate", "cases failed")
WINDOW = 14
"""Runs a plot shows: an axis's latest (two weeks of nights), so that a year of nights still draws a picture
a page shows readably; the table under it has every run."""


def finite(value: Any) -> float | None:
    """``value`` as a number, or None where it is none (NaN and Infinity, which Python's JSON reads, too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def share(value: float | None) -> str:
    """A share as the table prints it: ``12.5%``, or ``n/a`` where there is none."""
    return percent(finite(value))


@dataclass(frozen=True)
class Worst:
    """The largest rise of one run: a case, a label, the change in DirErr and how it was measured."""

    case: str
    label: str
    change: float
    p_value: float | None
    """The paired test's p when the run was compared with its baseline; None: against the group's base run."""

    def text(self) -> str:
        how = f"p={self.p_value:.2g}" if self.p_value is not None else "vs the base run"
        return f"{self.case} DirErr({self.label}) {100 * self.change:+.1f} ({how})"


@dataclass(frozen=True)
class RunRow:
    run_id: str
    model: str
    group: str
    role: str
    """base (the model the group is compared with), fine-tune (compared with it) or run."""
    metrics: dict[str, float | None]
    cells: dict[tuple[str, str], float | None]
    """(case, label) -> DirErr."""
    selection: str
    partial: str
    """Why the run covers less than its selection ("" when it does not)."""
    worst: Worst | None
    identity: str = ""
    """The model's identity (summary.json's model_identity, or its resolved name for older summaries)."""
    axis: str = ""
    """The selection, data and prompt set: runs that differ in it do not share an x axis."""
    complete: bool = True
    reasons: tuple[str, ...] = ()
    """Why the night is incomplete (summary.json's incomplete_reasons)."""
    ran: frozenset[str] = frozenset()
    failed: frozenset[str] = frozenset()

    @property
    def night(self) -> str:
        """complete, or INCOMPLETE and why."""
        if self.complete:
            return "complete"
        return "INCOMPLETE" + (f": {'; '.join(self.reasons)}" if self.reasons else "")


def run_metrics(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """A run's headline numbers: DirErr per label and accuracy as means over its cases, the shares of
    invalid answers and of failed cases."""
    cases = [c["scores"] for c in summary["cases"] if c.get("scores") is not None]
    out: dict[str, float | None] = {}
    for y in LABELS:
        values = [v for c in cases if (v := finite(c["dir_err"].get(y))) is not None]
        out[f"DirErr({y})"] = sum(values) / len(values) if values else None
    for name, key in (("accuracy", "accuracy"), ("invalid rate", "invalid_rate")):
        weighted = [(v, c["n"]) for c in cases if (v := finite(c.get(key))) is not None]
        n = sum(w for _, w in weighted)
        out[name] = sum(v * w for v, w in weighted) / n if n else None
    out["cases failed"] = summary["cases_failed"] / summary["cases_run"] if summary["cases_run"] else None
    return out


def _cells(summary: Mapping[str, Any]) -> dict[tuple[str, str], float | None]:
    return {
        (str(c["case"]), y): finite(c["scores"]["dir_err"].get(y))
        for c in summary["cases"]
        if c.get("scores") is not None
        for y in LABELS
    }


def _selection(summary: Mapping[str, Any]) -> tuple[str, int | None]:
    """The selection in words, and how many cases it makes (None when summary.json does not say)."""
    chosen = summary.get("selection") or {}
    sizes = {k: len(chosen[k]) for k in SELECTION_KEYS if isinstance(chosen.get(k), list)}
    cases = f"{summary['cases_run']} cases"
    if len(sizes) < len(SELECTION_KEYS):
        return f"{cases}, {summary.get('scenarios', '?')} scenarios", None
    shape = " x ".join(
        f"{sizes[k]} {k if sizes[k] != 1 else k.rstrip('s').replace('identitie', 'identity')}"
        for k in SELECTION_KEYS
    )
    framings = ", ".join(map(str, chosen["framings"]))
    return f"{cases} ({shape}: {framings}), {summary.get('scenarios', '?')} scenarios", math.prod(
        sizes.values()
    )


def _paired_worst(summary: Mapping[str, Any]) -> Worst | None:
    found = [
        Worst(str(c["case"]), str(y), difference, finite(ch["p_value"]))
        for c in summary["cases"]
        if (c.get("baseline") or {}).get("status") == "compared"
        for y, ch in (c["baseline"].get("changes") or {}).items()
        if (difference := finite(ch.get("difference"))) is not None
    ]
    return max(found, key=lambda w: w.change) if found else None


def _cell_worst(
    cells: Mapping[tuple[str, str], float | None], reference: Mapping[tuple[str, str], float | None]
) -> Worst | None:
    found = [
        Worst(case, label, value - base, None)
        for (case, label), value in cells.items()
        if value is not None and (base := reference.get((case, label))) is not None
    ]
    return max(found, key=lambda w: w.change) if found else None


def rows(summaries: Sequence[Mapping[str, Any]], group: str | None = None) -> list[RunRow]:
    """One row per run (``summaries`` oldest first), each in its group: ``group`` for all when given, else
    the identity of the base it was compared with, else its own (see groups.place)."""
    where_all = groups.place(summaries, group)
    placed = list(zip(summaries, where_all, groups.axes(summaries, where_all), strict=True))
    full_scenarios: dict[tuple[str, str], int] = {}
    for s, where, axis in placed:
        key = (where.group, axis)
        full_scenarios[key] = max(full_scenarios.get(key, 0), int(s.get("scenarios") or 0))
    out: list[RunRow] = []
    last_base: dict[tuple[str, str], dict[tuple[str, str], float | None]] = {}
    for s, where, axis in placed:
        cells = _cells(s)
        selection, expected = _selection(s)
        key = (where.group, axis)
        complete, reasons = groups.status(s)
        partial = []
        if expected is not None and s["cases_run"] < expected:
            partial.append(f"{s['cases_run']} of {expected} cases")
        if s.get("scenarios") is not None and int(s["scenarios"]) < full_scenarios[key]:
            partial.append(f"{s.get('scenarios')} of {full_scenarios[key]} scenarios")
        worst = _paired_worst(s) if where.role == "fine-tune" else None
        if worst is None and where.role != "base" and key in last_base:
            worst = _cell_worst(cells, last_base[key])
        if where.role == "base" and complete:
            last_base[key] = cells
        out.append(
            RunRow(
                str(s["run_id"]),
                str(s["model"]),
                where.group,
                where.role,
                run_metrics(s),
                cells,
                selection,
                "; ".join(partial),
                worst,
                where.identity,
                key[1],
                complete,
                reasons,
                frozenset(str(c["case"]) for c in [*s["cases"], *(s.get("generated_cases") or ())]),
                groups.failed_cases(s),
            )
        )
    return _base_first(out)


def _base_first(found: list[RunRow]) -> list[RunRow]:
    """Groups in the order they first appear; in each, the base's runs first, then the rest, oldest first."""
    order = list(dict.fromkeys(r.group for r in found))
    axes = list(dict.fromkeys((r.group, r.axis) for r in found))
    return sorted(found, key=lambda r: (order.index(r.group), axes.index((r.group, r.axis)), r.role != "base"))


def _group_worst(group: Sequence[RunRow]) -> tuple[RunRow, Worst] | None:
    found = [(r, r.worst) for r in group if r.worst is not None]
    if not found:
        return None
    row, worst = max(found, key=lambda rw: rw[1].change)
    return (row, worst) if worst.change > 0 else None


def page_body(
    all_rows: Sequence[RunRow], skipped: Sequence[str] = (), links: Links | None = None
) -> str:
    """The records skipped (counted, each with why), then per group: per axis (one selection, data and
    prompt set), the figure, its table and where each case first failed; ``links``: run id -> the relative
    address of its night's page (none: no run is linked)."""
    links = links or {}
    parts = [STYLE, LINKS_STYLE, _skipped(skipped)]
    for name in dict.fromkeys(r.group for r in all_rows):
        group = [r for r in all_rows if r.group == name]
        axes = list(dict.fromkeys(r.axis for r in group))
        parts.append(f'<div class="mathcomp-history"><h2>{escape(name)}</h2>')
        if len(axes) > 1:
            parts.append(
                f"<p>{len(axes)} selections: each has an axis of its own (runs of other cases do not compare).</p>"
            )
        for axis in axes:
            title = name if len(axes) == 1 else f"{name} [{axis}]"
            if len(axes) > 1:
                parts.append(f"<h3>{escape(axis)}</h3>")
            parts.append(_axis_block(title, [r for r in group if r.axis == axis], links))
        parts.append("</div>")
    return "".join(parts)


def _skipped(skipped: Sequence[str]) -> str:
    if not skipped:
        return ""
    what = "record" if len(skipped) == 1 else "records"
    items = "".join(f"<li>{escape(line)}</li>" for line in skipped)
    return (
        f'<div class="mathcomp-history-skipped"><p><strong>{len(skipped)} {what} skipped (not the summary.json '
        f"a suite run writes):</strong></p><ul>{items}</ul></div>"
    )


def window(group: Sequence[RunRow], size: int = WINDOW) -> list[RunRow]:
    """The latest ``size`` runs of ``group`` by when they ran (time_axis.age), in ``group``'s order."""
    latest = set(sorted(range(len(group)), key=lambda i: time_axis.age(group[i].run_id))[-size:])
    return [r for i, r in enumerate(group) if i in latest]


def _axis_block(name: str, everything: Sequence[RunRow], links: Links) -> str:
    worst = _group_worst(everything)
    bases = sum(r.role == "base" for r in everything)
    tuned = sum(r.role == "fine-tune" for r in everything)
    incomplete = sum(not r.complete for r in everything)
    said = f"{len(everything)} runs: {bases} of the base, {tuned} compared with it"
    said += f"; {incomplete} incomplete." if incomplete else "."
    if worst is not None:
        said += f" Worst rise: {worst[1].text()} in {worst[0].run_id} ({worst[0].model})."
    group = sorted(window(everything), key=lambda r: time_axis.age(r.run_id))
    if len(group) < len(everything):
        said += (
            f" The plot shows the latest {len(group)} of {len(everything)} runs ({group[0].run_id} on); "
            "the table under it has every run."
        )
    timeline = time_axis.timeline([r.run_id for r in group])
    said += (" " + timeline.note()) if timeline.undated else ""
    lines = {
        str(label): {case: [r.cells.get((case, label)) for r in group] for case in _cases(group)}
        for label in LABELS
    }
    shared = [c for c in _cases(group) if all(any((c, y) in r.cells for y in LABELS) for r in group if r.cells)]
    means = {str(label): [_mean(r, shared, label) for r in group] for label in LABELS}
    mark = (worst[1].case, worst[1].label) if worst is not None else None
    drawn = figures.regression_lines(
        timeline,
        lines,
        means,
        mark,
        [bool(r.partial) or not r.complete for r in group],
        [not r.complete for r in group],
        f"{name}: DirErr per case across runs",
        f"mean over the {len(shared)} cases every run has",
    )
    tips = [(r.run_id, f"{r.run_id} ({r.model}, {r.role}): {r.night}") for r in group]
    image = sections.png_html(drawn.png, f"history of {name}")
    figure = sections.figure_html(
        overlay(image, tips, drawn.anchors, links),
        f"history of {name}",
        "Each run placed by when it ran (the time its run id starts with). One thin line per case; thick, "
        "the mean over the cases every run of the group has (so that runs of other selections compare); "
        "the worst rise in red. Hollow markers: a partial run (a subset of its selection) or an incomplete "
        "night (a dotted line, INCOMPLETE at its foot)."
        + (" A run's points link to its night." if any(r.run_id in links for r in group) else ""),
    )
    return f"<p>{escape(said)}</p>{figure}{_table(everything, links)}{_first_failures(everything, links)}"


def _first_failures(group: Sequence[RunRow], links: Links) -> str:
    found = groups.first_failures([(r.run_id, r.ran, r.failed) for r in group])
    if not found:
        return "<p>No case failed in these runs.</p>"
    models = {r.run_id: r.model for r in group}
    head = "".join(f"<th>{h}</th>" for h in ("case", "first failed in", "failed in", "fails in the latest run"))
    body = "".join(
        f"<tr><td>{escape(f.case)}</td>"
        f"<td>{run_cell(f.run_id, links)} ({escape(models[f.run_id])})</td>"
        f'<td class="num">{f.failed_in} of {f.runs}</td><td>{"yes" if f.failing_now else "no"}</td></tr>'
        for f in found
    )
    return (
        '<div class="mathcomp-history-table mathcomp-first-failed"><h4>Where each case first failed</h4>'
        f"<table><tr>{head}</tr>{body}</table></div>"
    )


def _mean(row: RunRow, cases: Sequence[str], label: str) -> float | None:
    values = [v for c in cases if (v := row.cells.get((c, label))) is not None]
    return sum(values) / len(values) if values else None


def _cases(group: Sequence[RunRow]) -> list[str]:
    return list(dict.fromkeys(case for r in group for case, _ in r.cells))


def _table(group: Sequence[RunRow], links: Links) -> str:
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in ("run", "model", "role", "night", "selection", "partial", *METRICS, "worst rise")
    )
    body = "".join(
        f"<tr><td>{run_cell(r.run_id, links)}</td>"
        + "".join(f"<td>{escape(v)}</td>" for v in (r.model, r.role, r.night, r.selection, r.partial or "no"))
        + "".join(f'<td class="num">{share(r.metrics[n])}</td>' for n in METRICS)
        + f"<td>{escape(r.worst.text() if r.worst else 'n/a')}</td></tr>"
        for r in group
    )
    return f'<div class="mathcomp-history-table"><table><tr>{head}</tr>{body}</table></div>'


STYLE = """<style>
.mathcomp-history-table {max-height: 36em; overflow: auto; margin: 6px 0 24px}
.mathcomp-history-table table {border-collapse: collapse; font-size: 13px}
.mathcomp-history-table th, .mathcomp-history-table td {border: 1px solid #ccc; padding: 3px 8px;
  text-align: left; color: #222; vertical-align: top}
.mathcomp-history-table th {background: #f3f3f3; position: sticky; top: 0}
.mathcomp-history-table td.num {text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap}
</style>"""
