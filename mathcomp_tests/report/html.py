"""HTML fragments for pytest-html. Every value is escaped: model output is untrusted text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..scoring.metrics import OUTCOMES
from ..types import LABELS


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _cell(value: float | None, ceiling: float) -> str:
    over = value is not None and value > ceiling
    style = ' style="background:#f8d7da"' if over else ""
    return f"<td{style}>{_pct(value)}</td>"


def case_extra_html(summary: Mapping[str, Any]) -> str:
    """The confusion matrix and the first wrong items of one case."""
    confusion = summary["scores"]["confusion"]
    head = "".join(f"<th>{escape(o)}</th>" for o in OUTCOMES)
    rows = "".join(
        f"<tr><th>{escape(g)}</th>" + "".join(f"<td>{int(confusion[g][o])}</td>" for o in OUTCOMES) + "</tr>"
        for g in LABELS
    )
    parts = [
        f'<div class="mathcomp-case"><p>Confusion for {escape(summary["case"])} (rows: gold, columns: read)</p>',
        f"<table><tr><th></th>{head}</tr>{rows}</table>",
    ]
    decided = summary.get("decided")
    if decided:
        parts.append(
            f"<p>Decided by rule: {int(decided['rule'])}, by judge: {int(decided['judge'])}, "
            f"invalid: {int(decided['invalid'])}, errors: {int(decided['error'])}</p>"
        )
    examples = summary.get("examples", [])
    if examples:
        parts.append(
            "<p>Wrong items</p><table><tr><th>scenario</th><th>gold</th><th>read</th><th>decided by</th>"
            "<th>raw answer</th></tr>"
        )
        for ex in examples:
            parts.append(
                f"<tr><td>{escape(str(ex['scenario']))}</td><td>{escape(str(ex['gold']))}</td>"
                f"<td>{escape(str(ex['read']))}</td><td>{escape(str(ex.get('decided_by', '')))}</td>"
                f"<td><pre>{escape(str(ex['raw']))}</pre></td></tr>"
            )
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)


def summary_table_html(model: str, cases: Sequence[Mapping[str, Any]]) -> str:
    """One row per case: DirErr per label against its ceiling, accuracy, invalid and error rates."""
    head = "".join(f"<th>DirErr({y})</th>" for y in LABELS)
    rows = []
    for case in cases:
        scores, ceilings = case["scores"], case["ceilings"]
        if scores is None:
            rows.append(
                f'<tr><td>{escape(case["case"])}</td><td colspan="6">raised: {escape(str(case["error"]))}</td>'
                "<td>ERROR</td></tr>"
            )
            continue
        cells = "".join(_cell(scores["dir_err"][y], ceilings["dir_err"][y]) for y in LABELS)
        rows.append(
            f"<tr><td>{escape(case['case'])}</td>{cells}<td>{_pct(scores['accuracy'])}</td>"
            f"{_cell(scores['invalid_rate'], ceilings['invalid_rate'])}"
            f"{_cell(scores['error_rate'], ceilings['error_rate'])}"
            f"<td>{'pass' if case['passed'] else 'FAIL'}</td></tr>"
        )
    return (
        f'<div class="mathcomp-summary"><h2>Directional error: {escape(model)}</h2>'
        f"<table><tr><th>case</th>{head}<th>accuracy</th><th>invalid</th><th>errors</th><th>verdict</th></tr>"
        + "".join(rows)
        + "</table></div>"
    )


def run_header_html(run: Mapping[str, Any]) -> str:
    """Model, revision, data and usage of the run, above the case table."""
    usage = run.get("usage") or {}
    cost = usage.get("cost_usd")
    rows = [
        ("model", f"{run['model']} ({run['resolved']})"),
        ("revision", run.get("revision") or "unknown"),
        ("prompt set", run["prompt_set"]),
        (
            "dataset",
            f"{run['dataset']['name']} ({run['scenarios']} scenarios, policy {run['dataset']['policy']})",
        ),
        ("cases", f"{run['cases_run']} run, {run['cases_failed']} failed, {run['cases_errored']} raised"),
        (
            "thresholds",
            f"{run['thresholds']}: "
            + (
                ", ".join(f"[{s}]" for s in run["threshold_sections"])
                or "no [model.*] section matches this model"
            ),
        ),
        ("prompts sent to the model", str(run["prompts_sent"])),
        ("tokens in / out", f"{usage.get('input_tokens', 0)} / {usage.get('output_tokens', 0)}"),
        ("cost", "unknown" if cost is None else f"${cost:.4f}"),
    ]
    body = "".join(f"<tr><th>{escape(k)}</th><td>{escape(str(v))}</td></tr>" for k, v in rows)
    for key, title in (("kept_invalid", "kept with the published label"), ("excluded", "left out")):
        findings = run["dataset"][key]
        if findings:
            lines = escape("\n".join(findings))
            body += f"<tr><th>{escape(title)} ({len(findings)})</th><td><pre>{lines}</pre></td></tr>"
    return f'<div class="mathcomp-run"><table>{body}</table></div>'
