"""The CI job's own page: the run's verdict as Markdown, appended to ``$GITHUB_STEP_SUMMARY``.

What got worse should show on the CI run's page without downloading the artifact: the verdict line first
(INCOMPLETE before it when the run did not finish), the failed cases (new ones first, then known: the base
fails them too) with the value, its ceiling or rise and p, a few item ids, the neutral cases at chance and
the cases that could not see a rise (each named), the baseline's line and where the report lies. Read from
summary.json's plain dicts. Every text from a model, a file or an option goes through ``md`` (Markdown and
HTML specials escaped, mentions and issue references kept as text, newlines folded) and ``redact`` (no
secret's value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..backends.secrets import redact
from ..scoring.changes import named, tests
from ..scoring.metrics import percent
from . import chance, of_run, power
from .breaches import CEILING_NAMES, kinds
from .checks import NOTHING_READ, NOTHING_SCORED
from .standing import KNOWN, NEW

ENVIRONMENT = "GITHUB_STEP_SUMMARY"
"""The file GitHub Actions shows on the job's page (any CI may set it)."""
ROWS = 30
"""Failed checks listed; the rest are counted (summary.json and the report have them all)."""
ITEMS = 3
"""Scenario ids shown beside a failure."""
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
"""Characters that format inline Markdown or split a table cell (HTML's are entities instead)."""
_REFERENCE = re.compile(r"([@#])")
"""What GitHub turns into a live mention (@user) or a link (#123) after rendering the Markdown, on the text
itself: a backslash escape is gone by then, so a zero-width joiner goes after each instead."""
JOINER = "\u200d"
BUILT_IN = {
    NOTHING_READ: ("invalid_rate", "invalid rate", "a case that read nothing never passes"),
    NOTHING_SCORED: ("error_rate", "error rate", "a case that scored nothing never passes"),
}
"""The suite's own checks that fail a case which measured nothing (verdict/checks.py), whatever the
ceilings: the rate that shows why, and the rule."""


def md(text: object, limit: int = 300) -> str:
    """``text`` safe inside a Markdown table cell or line: no secret, HTML specials as entities, Markdown
    specials backslash-escaped, @ and # followed by a zero-width joiner (no mention, no issue link),
    newlines as spaces, at most ``limit`` characters."""
    plain = " ".join(redact(str(text)).split())
    if len(plain) > limit:
        plain = plain[: limit - 3] + "..."
    plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    plain = _REFERENCE.sub(r"\1" + JOINER, plain)
    return _SPECIAL.sub(r"\\\1", plain)


def code(text: object) -> str:
    """``text`` as a Markdown code span, shown as it is (a path): fenced by more backticks than it holds;
    not for table cells, where a pipe would still split the cell."""
    plain = " ".join(redact(str(text)).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", plain)), default=0) + 1)
    return f"{fence} {plain} {fence}" if plain.startswith("`") or plain.endswith("`") else f"{fence}{plain}{fence}"


def markdown(summary: Mapping[str, Any], report: str | Path | None = None) -> str:
    """The job summary of one run."""
    verdict = of_run.verdict(summary)
    lines = [f"## MathComp: {md(verdict.line, 1000)}", ""]
    lines.append(f"Model: {md(summary.get('model'))}" + _resolved(summary))
    rows = _rows(summary)
    if rows:
        lines += [
            "",
            "| standing | case | failed on | value | ceiling or rise | p | items |",
            "|---|---|---|---|---|---|---|",
            *(f"| {' | '.join(row)} |" for row in rows[:ROWS]),
        ]
        if len(rows) > ROWS:
            lines.append(f"\n... and {len(rows) - ROWS} more (see the report)")
    if verdict.known_pass:
        lines += ["", f"--fail-on=new: the {verdict.known} known failure(s) do not fail the job (xfailed)."]
    lines += _unseen_lines(summary)
    baseline = summary.get("baseline")
    if baseline:
        lines += ["", _baseline_line(baseline)]
    if report is not None:
        lines += ["", f"Report: {code(report)}"]
    return "\n".join(lines) + "\n"


def append(path: str | Path, summary: Mapping[str, Any], report: str | Path | None = None) -> None:
    """Append the run's job summary to ``path`` (the file $GITHUB_STEP_SUMMARY names)."""
    with Path(path).open("a", encoding="utf-8") as out:
        out.write(markdown(summary, report) + "\n")


def _unseen_lines(summary: Mapping[str, Any]) -> list[str]:
    """What a pass does not say, each case named (the first ``ROWS`` of each list): the neutral cases at
    chance (summary.json's ``at_chance``) and the cases that could not see a rise (``power.underpowered``)."""
    lines: list[str] = []
    found = chance.entries(summary)
    if found:
        lines += [
            "",
            f"AT CHANCE: {len(found)} neutral case(s) answered no better than always giving one answer; passing "
            "their ceilings says nothing about their arithmetic:",
            "",
            *(f"- {md(e.get('case'))}: {md(chance.short_text(e))}" for e in found[:ROWS]),
        ]
        lines += [f"- ... and {len(found) - ROWS} more (see summary.json)"] if len(found) > ROWS else []
    block = summary.get("power") or {}
    weak, unearned = power.underpowered(summary)
    if weak:
        lines += [
            "",
            f"{len(weak)} of {block.get('compared', len(weak))} compared cases {md(power.unseen(block))} at 80% "
            "power, on these labels:",
            "",
        ]
        for w in weak[:ROWS]:
            shown = power.labels_text(w.get("labels") or [], w.get("seen") or {})
            required = " (power required)" if str(w.get("case")) in unearned else ""
            lines.append(f"- {md(w.get('case'))}: {md(shown)}{required}")
        lines += [f"- ... and {len(weak) - ROWS} more (see summary.json)"] if len(weak) > ROWS else []
    return lines


def _resolved(summary: Mapping[str, Any]) -> str:
    resolved = summary.get("canonical") or summary.get("resolved")
    return f" ({md(resolved)})" if resolved and resolved != summary.get("model") else ""


def _rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """One row per failed check of a failed case: new cases first, then known, then the rest."""
    order = {NEW: 0, KNOWN: 1}
    failed = [c for c in of_run.failed_cases(summary)]
    failed.sort(key=lambda c: order.get(str(c.get("standing")), 2))
    rows = []
    for case in failed:
        standing = md(case.get("standing") or "")
        name = md(case.get("case"))
        if case.get("scores") is None:
            rows.append([standing, name, "raised", md(case.get("error") or ""), "", "", ""])
            continue
        ceilings, rises, found = kinds(case)
        own = [text for text in found if text not in BUILT_IN]
        for check in (text for text in found if text in BUILT_IN):
            rows.append([standing, name, md(f"{check} (built-in check)"), *_measured_nothing(case, check)])
        for metric in ceilings:
            rows.append([standing, name, md(metric), *_over_ceiling(case, metric)])
        for test in rises:
            rows.append([standing, name, md(f"{test} rise"), *_rise(case, test)])
        for text in own:
            rows.append([standing, name, "own check", md(text), "", "", ""])
        if not (ceilings or rises or own):  # a rise only Holm found at the end of the run
            for test, change in tests(case.get("baseline")):
                if change.get("holm_significant") and (change.get("difference") or 0) > change.get(
                    "max_increase", 0
                ):
                    rows.append([standing, name, md(f"{test} rise (Holm)"), *_rise(case, test)])
    for test, text in of_run.other_failures(summary):
        rows.append(["", md(test), "check", md(text), "", "", ""])
    return rows


def _measured_nothing(case: Mapping[str, Any], check: str) -> list[str]:
    """The rate that shows the case measured nothing, the rule, no p, a few of its items."""
    key, rate, rule = BUILT_IN[check]
    items = [str(e.get("scenario")) for e in case.get("examples") or []][:ITEMS]
    return [md(f"{rate} {percent(case['scores'].get(key))}"), md(rule), "", _items(items)]


def _over_ceiling(case: Mapping[str, Any], name: str) -> list[str]:
    """value (and the base's, when known), ceiling, p (none), a few wrong items."""
    metric = CEILING_NAMES[name]
    scores, ceilings = case["scores"], case["ceilings"]
    if metric.label:
        value, ceiling = scores["dir_err"][metric.label], ceilings["dir_err"][metric.label]
    else:
        value, ceiling = scores[metric.rate], ceilings[metric.rate]
    shown = percent(value)
    base = (((case.get("baseline") or {}).get("base") or {}).get("values") or {}).get(name)
    if base is not None:
        shown += f" (base {percent(base)})"
    items = [str(e.get("scenario")) for e in case.get("examples") or []][:ITEMS]
    return [md(shown), md(f"ceiling {percent(ceiling)}"), "", _items(items)]


def _rise(case: Mapping[str, Any], test: str) -> list[str]:
    """base -> now, the change against max_increase, p, the first items that raised it."""
    change = named(case, test) or {}
    value = f"{percent(change.get('baseline'))} → {percent(change.get('candidate'))}"
    rise = (
        f"{100 * (change.get('difference') or 0):+.1f} points (max {100 * change.get('max_increase', 0):.1f})"
    )
    p = change.get("p_value")
    return [
        md(value),
        md(rise),
        md(f"{p:.2g}") if isinstance(p, (int, float)) else "",
        _items(change.get("rose_scenarios") or []),
    ]


def _items(ids: Sequence[object]) -> str:
    shown = ", ".join(str(i) for i in list(ids)[:ITEMS])
    return md(shown + (", ..." if len(ids) > ITEMS else ""))


def _baseline_line(baseline: Mapping[str, Any]) -> str:
    """``Baseline <model> (<file>): N cases compared, R rises, largest change ...``."""
    source = f" ({md(baseline['source'])})" if baseline.get("source") else ""
    rises = len(baseline.get("rises") or [])
    text = f"{baseline.get('compared', 0)} cases compared, {rises} {'rise' if rises == 1 else 'rises'}"
    change = baseline.get("largest_change")
    if change is not None and change.get("difference"):
        text += (
            f", largest change {100 * change['difference']:+.1f} points ({change['case']}, {change['label']})"
        )
    if baseline.get("no_baseline"):
        text += f", {len(baseline['no_baseline'])} without a baseline"
    return f"Baseline {md(baseline.get('model'))}{source}: {md(text, 1000)}"
