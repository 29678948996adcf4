"""HTML fragments for pytest-html. Every value is escaped: model output is untrusted text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..listing import counted
from ..records.unreadable import note as unreadable_note
from ..scoring.changes import largest_change, tests
from ..scoring.metrics import OUTCOMES, percent
from ..types import LABELS

STYLE = """<style>
.mathcomp-run table, .mathcomp-summary table, .mathcomp-case table {border-collapse: collapse; font-size: 13px;
  margin: 6px 0 14px}
.mathcomp-run th, .mathcomp-run td, .mathcomp-summary th, .mathcomp-summary td, .mathcomp-case th,
.mathcomp-case td {border: 1px solid #ccc; padding: 3px 8px; text-align: left; color: #222}
.mathcomp-summary td {text-align: right; font-variant-numeric: tabular-nums}
.mathcomp-summary td:first-child {text-align: left}
.mathcomp-run th, .mathcomp-summary th {background: #f3f3f3}
.mathcomp-figure {margin: 12px 0 24px} .mathcomp-figure figcaption {font-size: 13px; color: #444}
.mathcomp-case pre {white-space: pre-wrap; margin: 0}
</style>"""
"""Our tables' look: readable at normal size, dark text on light fills."""


def _cell(value: float | None, ceiling: float) -> str:
    over = value is not None and value > ceiling
    style = ' style="background:#f8d7da"' if over else ""
    return f"<td{style}>{percent(value)}</td>"


def _interval(summary: Mapping[str, Any], label: str) -> str:
    interval = (summary["scores"].get("dir_err_ci") or {}).get(label)
    return "" if not interval else f"{100 * interval[0]:.1f} to {100 * interval[1]:.1f}%"


def _dir_err_rows(summary: Mapping[str, Any]) -> str:
    """DirErr per label with its 95% interval, the ceiling and (with a baseline) the paired change."""
    scores, ceilings = summary["scores"], summary["ceilings"]
    comparison = summary.get("baseline") or {}
    compared = comparison.get("status") == "compared"
    head = "<th>label</th><th>DirErr</th><th>95% interval</th><th>ceiling</th>"
    if compared:
        head += "<th>baseline</th><th>change (95% interval)</th><th>p</th><th>sees (80% power)</th>"
    rows = []
    for y in LABELS:
        cells = (
            f"<th>{escape(y)}</th>{_cell(scores['dir_err'][y], ceilings['dir_err'][y])}"
            f"<td>{_interval(summary, y)}</td><td>{percent(ceilings['dir_err'][y])}</td>"
        )
        if compared:
            cells += _change_cells(comparison["changes"][y])
        rows.append(f"<tr>{cells}</tr>")
    others = [(name, c) for name, c in tests(comparison) if not name.startswith("DirErr(")]
    if others:
        rows.append('<tr><th colspan="4">other tests against the baseline</th></tr>')
        rows += [f'<tr><th colspan="4">{escape(name)}</th>{_change_cells(c)}</tr>' for name, c in others]
    note = ""
    if comparison.get("status") == "no baseline":
        note = "<p><strong>no baseline</strong>: the baseline has no answers for this case.</p>"
    elif compared:
        note = f"<p>Against {escape(str(comparison['baseline_model']))}, {escape(comparison['method'])} test.</p>"
    gate = ceilings.get("gate", "point")
    gate_note = (
        "" if gate == "point" else f"<p>gate: the {escape(gate)} end of the interval meets the ceiling</p>"
    )
    return f"{note}{gate_note}<table><tr>{head}</tr>{''.join(rows)}</table>"


def _change_cells(c: Mapping[str, Any]) -> str:
    """baseline, change with its interval, p and the smallest rise the test sees."""
    sees = escape(str((c.get("power") or {}).get("text", "")))
    if c["difference"] is None:
        return f"<td>n/a</td><td>n/a</td><td></td><td>{sees}</td>"
    style = ' style="background:#f8d7da"' if c["breach"] else ""
    return (
        f"<td>{percent(c['baseline'])}</td><td{style}>{100 * c['difference']:+.1f} points "
        f"({100 * c['low']:+.1f} to {100 * c['high']:+.1f})</td><td>{c['p_value']:.3g}</td><td>{sees}</td>"
    )


def case_extra_html(summary: Mapping[str, Any]) -> str:
    """DirErr with its interval, the confusion matrix and the first wrong items of one case."""
    confusion = summary["scores"]["confusion"]
    head = "".join(f"<th>{escape(o)}</th>" for o in OUTCOMES)
    rows = "".join(
        f"<tr><th>{escape(g)}</th>" + "".join(f"<td>{int(confusion[g][o])}</td>" for o in OUTCOMES) + "</tr>"
        for g in LABELS
    )
    parts = [
        f'<div class="mathcomp-case"><p>DirErr for {escape(summary["case"])}</p>{_dir_err_rows(summary)}',
        f"<p>Confusion for {escape(summary['case'])} (rows: gold, columns: read)</p>",
        f"<table><tr><th></th>{head}</tr>{rows}</table>",
    ]
    unreadable = unreadable_note(summary)
    if unreadable:
        parts.append(f'<p class="mathcomp-unreadable">{escape(unreadable)}</p>')
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


def _verdict(case: Mapping[str, Any]) -> str:
    if case["passed"]:
        return "pass"
    rose = any(str(b).endswith(" rise") for b in case.get("breaches") or [])
    return "FAIL (rise)" if rose else "FAIL"


def _baseline_mark(case: Mapping[str, Any]) -> str:
    status = (case.get("baseline") or {}).get("status")
    return " (no baseline)" if status == "no baseline" else ""


def _largest_change(case: Mapping[str, Any]) -> str:
    """The case's change against the baseline as a table cell (a breach shaded): the same change the
    terminal table shows (scoring/changes.py), so a failing row shows the rise that failed it."""
    c = largest_change([case])
    if c is None:
        return "<td>n/a</td>"
    if c["difference"] == 0:
        return "<td>no change</td>"
    style = ' style="background:#f8d7da"' if c["breach"] else ""
    mark = " rose" if c["breach"] else " significant" if c["significant"] else ""
    p = "" if c["p_value"] is None else f" (p {c['p_value']:.2g})"
    return f"<td{style}>DirErr({escape(str(c['label']))}) {100 * c['difference']:+.1f}{p}{mark}</td>"


def summary_table_html(model: str, cases: Sequence[Mapping[str, Any]]) -> str:
    """One row per case: DirErr per label against its ceiling, accuracy, invalid and error rates, and
    (with a baseline) the largest change against it."""
    head = "".join(f"<th>DirErr({y})</th>" for y in LABELS)
    compared = any((c.get("baseline") or {}).get("status") == "compared" for c in cases)
    rows = []
    for case in cases:
        scores, ceilings = case["scores"], case["ceilings"]
        if scores is None:
            rows.append(
                f'<tr><td>{escape(case["case"])}</td><td colspan="{6 + compared}">'
                f"raised: {escape(str(case['error']))}</td>"
                "<td>ERROR</td></tr>"
            )
            continue
        cells = "".join(_cell(scores["dir_err"][y], ceilings["dir_err"][y]) for y in LABELS)
        rows.append(
            f"<tr><td>{escape(case['case'])}</td>{cells}<td>{percent(scores['accuracy'])}</td>"
            f"{_cell(scores['invalid_rate'], ceilings['invalid_rate'])}"
            f"{_cell(scores['error_rate'], ceilings['error_rate'])}"
            f"{_largest_change(case) if compared else ''}"
            f"<td>{_verdict(case)}{_baseline_mark(case)}</td></tr>"
        )
    change = "<th>largest change vs baseline, points</th>" if compared else ""
    return (
        f'{STYLE}<div class="mathcomp-summary"><h2>Directional error: {escape(model)}</h2>'
        f"<table><tr><th>case</th>{head}<th>accuracy</th><th>invalid</th><th>errors</th>{change}"
        "<th>verdict</th></tr>"
        + "".join(rows)
        + "</table></div>"
    )


def run_header_html(run: Mapping[str, Any]) -> str:
    """Model, revision, data, verdicts, the worst cells, invalid and error rates, usage: above the table."""
    from ..verdict.of_run import every_case
    from .pooled import rates, worst_cells

    usage = run.get("usage") or {}
    cost = usage.get("cost_usd")
    cases = every_case(run)  # test_generated's cases too: every case pytest ran
    errored = int(run.get("cases_errored", 0))
    failed = int(run["cases_failed"])
    overall = rates(cases)
    shown, flagged = worst_cells(cases)
    worst = (
        f"{flagged} failed or changed: " + "; ".join(shown) + ("; ..." if flagged > len(shown) else "")
        if flagged
        else "none failed or changed"
    )
    rows = [
        ("model", f"{run['model']} ({run['resolved']})"),
        ("revision", run.get("revision") or "unknown"),
        ("prompt set", run["prompt_set"]),
        (
            "dataset",
            f"{run['dataset']['name']} ({run['scenarios']} scenarios, policy {run['dataset']['policy']})",
        ),
        ("dataset sha256", run["dataset"].get("sha256", "unknown")),
        ("cases", f"{run['cases_run'] - failed - errored} passed, {failed} failed, {errored} errored"),
        (
            "thresholds",
            f"{run['thresholds']}: "
            + (
                ", ".join(f"[{s}]" for s in run.get("threshold_sections", []))
                or "no [model.*] section matches this model"
            ),
        ),
        ("worst cells", worst),
        ("invalid answers", percent(overall["invalid_rate"])),
        ("failed requests", percent(overall["error_rate"])),
        *_usage_rows(run),
        ("cost", "unknown" if cost is None else f"${cost:.4f}"),
        *_batch_rows(run.get("batch")),
    ]
    baseline = run.get("baseline")
    if baseline:
        rows.append(
            (
                "baseline",
                f"{baseline['model']} ({baseline['paired_test']}{', Holm' if baseline['holm'] else ''}): "
                f"{counted(baseline['compared'], 'case')} compared, {counted(len(baseline['rises']), 'rise')}, "
                f"{len(baseline['no_baseline'])} without a baseline",
            )
        )
    body = "".join(
        f'<tr><th>{escape(k)}</th><td data-key="{escape(k)}">{escape(str(v))}</td></tr>' for k, v in rows
    )
    for key, title in (("kept_invalid", "kept with the published label"), ("excluded", "left out")):
        findings = run["dataset"][key]
        if findings:
            lines = escape("\n".join(findings))
            body += f"<tr><th>{escape(title)} ({len(findings)})</th><td><pre>{lines}</pre></td></tr>"
    return f'<div class="mathcomp-run"><table>{body}</table></div>'


def _usage_rows(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What this run sent to the model and what it took from the cache, prompts and tokens alike (a
    cached run sends nothing, yet its answers had tokens: both are said, apart)."""
    usage = run.get("usage") or {}
    tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    if "cached_requests" not in usage:  # a summary.json written before the cache was counted apart
        return [
            ("prompts sent to the model", str(run["prompts_sent"])),
            ("tokens in / out (sent and cached)", f"{tokens_in} / {tokens_out}"),
        ]
    cached_in, cached_out = int(usage["cached_input_tokens"]), int(usage["cached_output_tokens"])
    cached = int(usage["cached_requests"])
    answers = f"{int(usage['requests']) - cached} sent to the model now, {cached} taken from the cache"
    by_batch = int((run.get("batch") or {}).get("answered", 0))
    if by_batch:  # --batch stores its answers before the cases read them: the cache, paid for by this run
        answers += f" ({by_batch} of them answered by batch in this run)"
    return [
        ("answers", answers),
        (
            "tokens in / out",
            f"sent now {tokens_in - cached_in} / {tokens_out - cached_out}; "
            f"from the cache {cached_in} / {cached_out}",
        ),
    ]


def _batch_rows(batch: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Under --batch: what was sent by batch, and what the batch price saved against live requests."""
    if not batch:
        return []
    created = len(batch["batches_created"])
    sent = f"{batch['requests_sent']} requests in {created} new batch{'' if created == 1 else 'es'}"
    sent += f", {len(batch['batches_resumed'])} resumed; {batch['answered']} answered, {batch['failed']} failed"
    saved = batch.get("saved_usd")
    price = "unknown" if saved is None else f"${batch['cost_usd']:.4f} at the batch price, ${saved:.4f} saved"
    return [("batch API", sent), ("batch cost", f"{price} ({batch['pricing']})")]
