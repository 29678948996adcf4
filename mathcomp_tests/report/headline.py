"""The report's opening: the verdict. Did the run pass; if not, which cases failed and why: each value
over its ceiling (with the ceiling), each rise over the baseline (with its change, 95% interval and p),
the user's own checks, cases that raised. Read from summary.json's plain dicts; every text is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ..scoring.changes import label_of, named
from ..scoring.metrics import percent
from ..summary_format import COMPLETE, is_incomplete
from ..verdict import narrowing
from ..verdict.breaches import CEILING_NAMES, RISE, kinds
from ..verdict.checks import NOTHING_READ, NOTHING_SCORED
from ..verdict.of_run import every_case, failed_cases, invariance_failures, verdict
from .incomplete import incomplete_html

Case = Mapping[str, Any]

STYLE = """<style>
.mathcomp-verdict {border: 2px solid #b00020; border-radius: 4px; padding: 10px 14px; margin: 8px 0 18px;
  background: #fff5f5; max-width: 1100px}
.mathcomp-verdict.passed {border-color: #1b7f3b; background: #f3fbf5}
.mathcomp-verdict h2 {margin: 0 0 6px; font-size: 20px; color: #8a0018}
.mathcomp-verdict.passed h2 {color: #14622d}
.mathcomp-verdict h3 {margin: 12px 0 4px; font-size: 15px; color: #222}
.mathcomp-verdict table {border-collapse: collapse; font-size: 13px; margin: 4px 0 8px}
.mathcomp-verdict th, .mathcomp-verdict td {border: 1px solid #ccc; padding: 3px 8px; text-align: left;
  color: #222; background: #fff}
.mathcomp-verdict th {background: #f3f3f3}
.mathcomp-verdict td.num {text-align: right; font-variant-numeric: tabular-nums}
.mathcomp-verdict p {margin: 4px 0}
.mathcomp-verdict summary {cursor: pointer; font-size: 13px; color: #444; margin: 0 0 8px}
</style>"""


@dataclass(frozen=True)
class Rise:
    case: str
    label: str
    change: Mapping[str, Any]
    holm_only: bool = False
    """Failed under the Holm correction at the end of the run, not by the case's own test."""
    name: str = ""
    """The test that rose: ``DirErr(less)``, ``soft DirErr(less)``, ``toward-cue rate(less)``."""


def _pct(value: Any) -> str:
    return percent(value if isinstance(value, (int, float)) else None)


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def rises(summary: Mapping[str, Any]) -> list[Rise]:
    """Every rise that failed a case, largest first: the case's own breaches and the Holm failures."""
    cases = {str(c["case"]): c for c in every_case(summary)}
    found: list[Rise] = []
    for case_id, case in cases.items():
        for name in kinds(case)[1]:
            change = named(case, name)
            if change is not None:
                found.append(Rise(case_id, label_of(name), change, name=name))
    for text in (summary.get("baseline") or {}).get("holm_failures") or []:
        case_id, _, rest = str(text).partition(": ")
        name = rest.removesuffix(RISE)
        change = named(cases.get(case_id), name)
        if change is not None and not any(r.case == case_id and r.name == name for r in found):
            found.append(Rise(case_id, label_of(name), change, holm_only=True, name=name))
    return sorted(found, key=lambda r: -(r.change.get("difference") or 0.0))


def falls(cases: Sequence[Case]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """Significant falls of DirErr against the baseline (improvements), largest first."""
    out = []
    for case in cases:
        comparison = case.get("baseline") or {}
        if comparison.get("status") != "compared":
            continue
        for label, change in comparison["changes"].items():
            if change.get("significant") and (change.get("difference") or 0.0) < 0:
                out.append((str(case["case"]), str(label), change))
    return sorted(out, key=lambda f: f[2]["difference"])


def label_change(case: Case | None, label: str) -> Mapping[str, Any] | None:
    """``label``'s paired change against the baseline in a case summary; None where it was not compared."""
    comparison = (case or {}).get("baseline") or {}
    if comparison.get("status") != "compared":
        return None
    change = comparison["changes"].get(label)
    return change if change and change.get("difference") is not None else None


def ceiling_rows(cases: Sequence[Case]) -> list[tuple[str, str, float | None, float, str]]:
    """(case, metric, value, ceiling, how it was held) for every value over its ceiling."""
    rows = []
    for case in cases:
        if case.get("scores") is None:
            continue
        scores, ceilings = case["scores"], case["ceilings"]
        gate = ceilings.get("gate", "point")
        for name in kinds(case)[0]:
            metric = CEILING_NAMES[name]
            if metric.label:
                value = scores["dir_err"][metric.label]
                ceiling = ceilings["dir_err"][metric.label]
                interval = (scores.get("dir_err_ci") or {}).get(metric.label)
                held = "" if gate == "point" or not interval else f"{gate} end of {_interval(interval)}"
            else:
                value, ceiling, held = scores[metric.rate], ceilings[metric.rate], ""
            rows.append((str(case["case"]), name, value, float(ceiling), held))
    return rows


RAISED_SHOWN = 6
"""Scenario ids shown beside a rise (summary.json keeps them all)."""


def raised_by(label: str, change: Mapping[str, Any]) -> str:
    """``81 newly less, 1 no longer: scenarios 2, 4, 6, ...``: the items whose answers made a rise."""
    ids = [str(i) for i in change.get("rose_scenarios") or []]
    text = f"{change.get('rose', len(ids))} newly {label}, {change.get('fell', 0)} no longer"
    if ids:
        text += ": scenario" + ("s " if len(ids) > 1 else " ") + ", ".join(ids[:RAISED_SHOWN])
        text += ", ..." if len(ids) > RAISED_SHOWN else ""
    return text


def _interval(pair: Sequence[float]) -> str:
    return f"{100 * pair[0]:.1f} to {100 * pair[1]:.1f}%"


SHOWN = 8
"""Rows of a verdict table shown at once; the rest open under "N more" (a <details>, no script)."""


def _table(head: Sequence[str], rows: Sequence[Sequence[tuple[str, bool]]]) -> str:
    """A table whose cells are (text, is a number); the texts are escaped here. Past ``SHOWN`` rows (and
    two more), the rest fold away so that the figures stay near the top."""
    top = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
    lines = [
        "<tr>" + "".join(f"<td{' class=num' if num else ''}>{escape(t)}</td>" for t, num in row) + "</tr>"
        for row in rows
    ]
    if len(lines) <= SHOWN + 2:
        return f"<table>{top}{''.join(lines)}</table>"
    rest = "".join(lines[SHOWN:])
    return (
        f"<table>{top}{''.join(lines[:SHOWN])}</table>"
        f"<details><summary>{len(lines) - SHOWN} more</summary><table>{top}{rest}</table></details>"
    )


def _standing(case: Case, metric: str) -> str:
    """``new``, or ``known (base 45.0%)``: the base's own value on the same items, over the same ceiling."""
    if case.get("standing") != "known":
        return str(case.get("standing") or "")
    base = (((case.get("baseline") or {}).get("base") or {}).get("values") or {}).get(metric)
    return f"known (base {_pct(base)})"


BUILT_IN = (NOTHING_READ, NOTHING_SCORED)
"""The breaches the suite adds itself to a case that read or scored nothing: not the project's own checks."""


def _left_out(summary: Mapping[str, Any]) -> str:
    """`` Not run (narrowed by -k ...): ...`` for a narrowed run's verdict box; empty otherwise."""
    block = summary.get("narrowed")
    if not block:
        return ""
    shown = narrowing.left_out_text(block, 5) or "other checks"
    return f" Not run (narrowed by {narrowing.by_text(block)}): {shown}; this is no verdict on them."


def title(summary: Mapping[str, Any]) -> str:
    """The verdict box's title: of_run.verdict's line, the one the terminal and the job summary say, less
    its INCOMPLETE opening where the box already says that above it (incomplete_html)."""
    if not is_incomplete(summary):
        return verdict(summary).line
    return verdict({**summary, "status": COMPLETE, "incomplete_reasons": []}).line.replace("PASSED: ", "", 1)


def verdict_html(summary: Mapping[str, Any]) -> str:
    """The verdict box: the headline, then a table per kind of failure, rises first when there are any."""
    cases = every_case(summary)
    baseline = summary.get("baseline") or {}
    found_rises = rises(summary)
    ceiling = ceiling_rows(cases)
    flagged = [(str(c["case"]), t) for c in cases for t in kinds(c)[2]]
    nothing = [
        (c, f"{t} (built-in check: a case that measured nothing never passes)")
        for c, t in flagged
        if t in BUILT_IN
    ]
    own = [(c, t) for c, t in flagged if t not in BUILT_IN]
    errored = [(str(c["case"]), str(c.get("error") or "")) for c in cases if c.get("scores") is None]
    invariance = invariance_failures(summary)
    reveal = [
        (str(r["case"]), ", ".join(map(str, r["breaches"])))
        for r in summary.get("reveal_after") or []
        if r.get("breaches")
    ]
    failed = failed_cases(summary) or invariance or reveal
    by_ceiling = {c for c, *_ in ceiling}
    by_rise = {r.case for r in found_rises}
    reasons = []
    if by_ceiling:
        reasons.append(f"{len(by_ceiling)} over a ceiling")
    if by_rise:
        reasons.append(f"{len(by_rise)} with a significant rise over the baseline")
    if nothing:
        reasons.append(f"{len(nothing)} that measured nothing")
    if own:
        reasons.append(f"{len({c for c, _ in own})} failing the project's own checks")
    if errored:
        reasons.append(f"{len(errored)} raised")
    if invariance:
        reasons.append(f"{len(invariance)} cue-invariance checks")
    if reveal:
        reasons.append(f"{len(reveal)} Reveal-After checks")
    against = ""
    if baseline:
        against = (
            f" Compared with {baseline.get('model')} ({baseline.get('paired_test')} test"
            f"{', Holm' if baseline.get('holm') else ''}, alpha {baseline.get('alpha', 0.05)}): "
            f"{baseline.get('compared', 0)} cases compared"
            + (
                f", {len(baseline.get('no_baseline') or [])} without a baseline"
                if baseline.get("no_baseline")
                else ""
            )
            + "."
        )
    known_pass = verdict(summary).known_pass  # --fail-on=new and every failure known: the job passes
    incomplete = incomplete_html(summary)  # INCOMPLETE comes first; such a run never says PASSED
    if failed:
        box = "passed" if known_pass and not incomplete else "failed"
        parts = [f'<div class="mathcomp-verdict {box}">{incomplete}<h2>{escape(title(summary))}</h2>']
        parts.append(f"<p>{escape('; '.join(reasons))}.{escape(against)}</p>")
    elif incomplete:
        ran = f"<h3>{escape(f'Nothing failed in the {len(cases)} cases that ran')}</h3>" if cases else ""
        parts = [f'<div class="mathcomp-verdict incomplete">{incomplete}{ran}']
    else:
        box = "incomplete" if summary.get("shard") else "passed"  # a shard's verdict waits for the merge
        parts = [f'<div class="mathcomp-verdict {box}"><h2>{escape(title(summary))}</h2>']
        tail = " and no significant rise over the baseline" if baseline else ""
        parts.append(
            f"<p>{escape(f'Every value is under its ceiling{tail}.{against}{_left_out(summary)}')}</p>"
        )
    if found_rises:
        parts.append("<h3>What got worse: rises over the baseline</h3>")
        parts.append(
            _table(
                (
                    "case", "test", "baseline", "now", "change, points", "95% interval", "p", "max increase",
                    "items that raised it",
                ),  # fmt: skip
                [
                    [
                        (r.case + (" (under Holm)" if r.holm_only else ""), False),
                        (r.name or f"DirErr({r.label})", False),
                        (_pct(r.change.get("baseline")), True),
                        (_pct(r.change.get("candidate")), True),
                        (_points(r.change.get("difference")), True),
                        (f"{_points(r.change.get('low'))} to {_points(r.change.get('high'))}", True),
                        (f"{r.change.get('p_value', float('nan')):.2g}", True),
                        (f"{100 * r.change.get('max_increase', 0.0):.1f}", True),
                        (raised_by(r.label, r.change), False),
                    ]
                    for r in found_rises
                ],
            )
        )
    if ceiling:
        parts.append("<h3>Over a ceiling</h3>")
        by_id = {str(c["case"]): c for c in cases}  # new failures first, then known (the base fails them too)
        ordered = sorted(
            ceiling, key=lambda row: (by_id[row[0]].get("standing") == "known", -((row[2] or 0) - row[3]))
        )
        parts.append(
            _table(
                ("case", "metric", "value", "ceiling", "held", *(("standing",) if baseline else ())),
                [
                    [
                        (c, False),
                        (m, False),
                        (_pct(v), True),
                        (_pct(cap), True),
                        (held or "the estimate", False),
                        *([(_standing(by_id[c], m), False)] if baseline else []),
                    ]
                    for c, m, v, cap, held in ordered
                ],
            )
        )
    for heading, rows, head in (
        ("Cases that measured nothing", nothing, ("case", "failure")),
        ("The project's own checks", own, ("case", "failure")),
        ("Cases that raised", errored, ("case", "error")),
        ("Cue invariance", invariance, ("case", "over its ceiling")),
        ("Reveal-After", reveal, ("case", "over its ceiling")),
    ):
        if rows:
            parts.append(f"<h3>{escape(heading)}</h3>")
            parts.append(_table(head, [[(a, False), (b[:500], False)] for a, b in rows]))
    improved = falls(cases)
    if improved:
        shown = "; ".join(
            f"{case} DirErr({label}) {_points(change['difference'])} points"
            for case, label, change in improved[:3]
        )
        more = f" and {len(improved) - 3} more" if len(improved) > 3 else ""
        parts.append(f"<p>{escape(f'Significant falls (improvements): {shown}{more}.')}</p>")
    parts.append("</div>")
    return STYLE + "".join(parts)
