"""The table of DirErr per case printed at the end of a pytest run, and the baseline's line under it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..listing import few
from ..printable import printable
from ..records.unreadable import note as unreadable_note
from ..scoring.changes import largest_change
from ..scoring.metrics import CASE_METRICS, Metric, percent
from ..verdict import chance, power
from . import known_failures

OVER = "*"
"""Beside a value above its ceiling."""
ROSE = "^"
"""Beside a value whose rise over the baseline is significant and above max_increase."""
HEADINGS = {"invalid_rate": "invalid", "error_rate": "errors"}


def write_table(
    tr: Any,
    model: str,
    cases: Sequence[dict[str, Any]],
    run_dir: object,
    baseline: Mapping[str, Any] | None = None,
) -> None:
    """One row per case: every gated value (CASE_METRICS) and accuracy, each marked where it failed; with a
    baseline, the largest change of DirErr against it, and a line that sums the comparison up."""
    tr.write_sep("=", f"MathComp directional error: {model}")
    w = max([40, *(len(c["case"]) for c in cases)])  # protocol and generated case ids run longer than 40
    heads = [f"{_heading(m):>7}  " for m in CASE_METRICS]
    heads.insert(len([m for m in CASE_METRICS if m.label]), f"{'acc':>7}  ")
    change = "  change vs baseline  sees (80% power)" if baseline else ""
    tr.write_line(f"{'case':<{w}} {''.join(heads)}{change}".rstrip())
    marked = False
    for case in cases:
        sc = case["scores"]
        if sc is None:
            tr.write_line(f"{case['case']:<{w}} ERROR: {case['error'][:200]}")
            continue
        cells = []
        for m in CASE_METRICS:
            mark = _mark(m, case["breaches"])
            marked = marked or bool(mark)
            cells.append(f"{percent(_value(m, sc)):>7}{mark:<2}")
        cells.insert(len([m for m in CASE_METRICS if m.label]), f"{percent(sc['accuracy']):>7}  ")
        row = f"{case['case']:<{w}} {''.join(cells)}"
        if baseline:
            row += f"  {_change_text(largest_change([case])):<18}  {_sees_text(case):<16}"
        flag = "" if case["passed"] else "  FAIL" + (f" ({case['standing']})" if case.get("standing") else "")
        if (case.get("baseline") or {}).get("status") == "no baseline":
            flag += "  no baseline"
        tr.write_line((row + flag).rstrip())
    if marked:
        tr.write_line(
            f"{OVER} above its ceiling; {ROSE} rose over the baseline by more than max_increase (paired test)"
        )
    for note in chance_notes(cases):
        tr.write_line(note)
    for note in filter(None, map(unreadable_note, cases)):
        tr.write_line(note)
    if baseline:
        tr.write_line(baseline_line(baseline))
        standing_line = known_failures.terminal_line(cases, baseline)
        if standing_line:
            tr.write_line(standing_line)
    tr.write_line(f"run folder: {run_dir}")


def _heading(metric: Metric) -> str:
    return metric.label or HEADINGS.get(metric.name, metric.name)


def _value(metric: Metric, scores: Mapping[str, Any]) -> float | None:
    """``metric``'s value in a case summary's scores (plain JSON)."""
    return scores["dir_err"][metric.label] if metric.label else scores[metric.rate]


def _mark(metric: Metric, breaches: Sequence[str]) -> str:
    """``*`` and/or ``^`` as the verdict named this metric among the case's breaches."""
    return (OVER if metric.name in breaches else "") + (ROSE if f"{metric.name} rise" in breaches else "")


def _change_text(change: Mapping[str, Any] | None) -> str:
    """``+12.3 more``: a DirErr change in percentage points, with its label."""
    if change is None:
        return ""
    return f"{100 * change['difference']:+.1f} {change['label'] if change['difference'] else ''}".rstrip()


def _sees_text(case: Mapping[str, Any]) -> str:
    """The smallest rise the case's weakest label still sees (``+12.5``), ``blind: less`` where some label
    cannot be seen at its detect_rise; empty when not compared."""
    found = power.seen(case)
    if not found:
        return ""
    weak = power.blind(case)
    if weak:
        return "blind: " + ",".join(weak)
    return f"+{100 * max(v for v in found.values() if v is not None):.1f}"


def baseline_line(baseline: Mapping[str, Any]) -> str:
    """``baseline <model>: N cases compared, R rises, largest change +x.x points (case, label)``."""
    compared, rises = baseline["compared"], len(baseline["rises"])
    line = (
        f"baseline {printable(str(baseline['model']))}: {compared} {'case' if compared == 1 else 'cases'} compared, "
        f"{rises} {'rise' if rises == 1 else 'rises'}"
    )
    others = [r for r in baseline["rises"] if not r.partition(": ")[2].startswith("DirErr(")]
    if others:  # rises of soft DirErr or the toward-cue rate: the change column shows DirErr only
        line += f" ({few(others)})"
    change = baseline.get("largest_change")
    if change is not None:
        where = f"{change['case']}, {change['label']}" if change["difference"] else "no DirErr changed"
        line += f", largest change {100 * change['difference']:+.1f} points ({where})"
    if baseline.get("no_baseline"):
        line += f", {len(baseline['no_baseline'])} without a baseline"
    if baseline.get("holm"):
        line += f"; Holm over {baseline.get('tests')} tests, each at level {baseline.get('level', 0):.2g}"
    return line


def chance_notes(cases: Sequence[dict[str, Any]]) -> list[str]:
    """A line for each neutral case answered no better than one constant answer would be (verdict/chance.py):
    such a model passes DirErr ceilings set around its own numbers while knowing none of the arithmetic."""
    return [chance.note(entry) for entry in chance.at_chance(cases)]
