"""The report's section "What changed, item by item" (and `mathcomp diff --html`'s page): first a table of
every case in the gate's order (the failed cases first, the largest rise over the baseline first: report/
gate_order.py), then per case, in the same order, the counts of each kind of change and per label, and the
items that changed, each with its prompt, both answers and both runs' label probabilities. The items that
did not change are counted, not listed (``every``: listed too, behind a "changed items only" checkbox that
works by CSS alone, with no script). Every text is escaped: prompts, answers and model names are untrusted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..data.generated_draw import GENERATED_PREFIX
from ..listing import counted
from ..records import answer_sets
from ..scoring import item_changes
from ..scoring.item_changes import Answer, CaseChanges, ItemChange, LabelFlips
from ..types import LABELS
from . import gate_order

TITLE = "What changed, item by item"
REGRESSION = (
    "Regression = right to wrong + to the cue word's label - wrong to right - off the cue word's label."
)
ORDER = "Cases in the gate's order: the failed cases first, the largest rise over the baseline first."
ORDER_WITHOUT_GATE = (
    "Cases by regression, worst first (the newer side has no summary.json to take the gate's order from)."
)
SHORT_PROMPT = 160
SHORT_ANSWER = 160

STYLE = """<style>
.mathcomp-changes table {border-collapse: collapse; font-size: 13px; margin: 6px 0 14px}
.mathcomp-changes th, .mathcomp-changes td {border: 1px solid #ccc; padding: 3px 8px; text-align: left;
  vertical-align: top; color: #222}
.mathcomp-changes th {background: #f3f3f3}
.mathcomp-changes h3 {color: #222; font-size: 15px; margin: 18px 0 4px}
.mathcomp-changes pre {white-space: pre-wrap; margin: 0; max-width: 60ch}
.mathcomp-changes tr.mathcomp-worse td {background: #fdecee}
.mathcomp-changes tr.mathcomp-better td {background: #eaf6ec}
.mathcomp-changes .mathcomp-probs {color: #555; font-size: 12px}
.mathcomp-changed-only:checked ~ .mathcomp-changes-body tr.mathcomp-same {display: none}
.mathcomp-changed-only:checked ~ .mathcomp-changes-body .mathcomp-nothing table.mathcomp-items {display: none}
</style>"""
"""The filter: while the checkbox (a sibling before the cases) is ticked, unchanged rows are not drawn."""


def section_html(
    summary: Mapping[str, Any] | None, records: Sequence[Mapping[str, Any]], near: Sequence[Path] = ()
) -> str:
    """The section for a run compared with a baseline file or run folder (summary.json's ``baseline``
    names its ``source``), looked for as written, then in each folder of ``near``; one line instead where
    the base's answers are not kept (--baseline-model) or cannot be read; "" for a run without a baseline."""
    block = (summary or {}).get("baseline")
    if not isinstance(block, Mapping):
        return ""
    source = block.get("source")
    if not source:
        return _note(
            f"Compared with the base model {block.get('model')} asked in this run (--baseline-model): no record "
            "of its answers is kept item by item, so there is no list of the items that changed."
        )
    path = next((p for p in (Path(source), *(folder / source for folder in near)) if p.exists()), None)
    if path is None:
        return _note(
            f"The baseline {source} is not found from here, so the items that changed cannot be listed."
        )
    try:
        base = answer_sets.load(path, "the baseline")
    except (answer_sets.SourceError, answer_sets.DamagedError) as exc:
        return _note(f"The baseline cannot be read, so the items that changed cannot be listed: {exc}")
    run = answer_sets.from_records(Path("."), summary or {}, records, name="this run")
    changes = item_changes.compare(run.golds, _fixed(base.answers), run.answers)
    missing = [c for c in run.answers if c not in base.answers]
    lines = [f"Against the baseline {source} ({base.model}): {counted(len(changes), 'case')}, item by item."]
    if missing:
        lines.append(f"No baseline answers for {', '.join(missing)}.")
    if not base.has_text:
        lines.append(f"The baseline: {answer_sets.LETTERS_ONLY}.")
    return changes_html(changes, "baseline", "this run", lines, "mathcomp-changes", summary=summary)


def _fixed(answers: Mapping[str, Any]) -> dict[str, Any]:
    """test_framing's cases only: the run's records passed here are its results.jsonl, not generated/'s."""
    return {c: a for c, a in answers.items() if not c.startswith(GENERATED_PREFIX)}


def _note(text: str) -> str:
    return f'<div class="mathcomp-changes"><h2>{escape(TITLE)}</h2><p>{escape(text)}</p></div>'


def changes_html(
    changes: Sequence[CaseChanges],
    base: str,
    candidate: str,
    lines: Sequence[str],
    anchor: str,
    every: bool = False,
    summary: Mapping[str, Any] | None = None,
) -> str:
    """The section: ``lines`` (plain text) under its title, the table of cases, then each case with its
    changed items (``every``: all its items, with the filter); ``base`` and ``candidate`` name the two runs'
    columns; ``anchor`` is the section's id; ``summary``, the newer run's summary.json, gives the gate's order
    and each case's standing (without it, the cases keep their order: regression, worst first)."""
    found = gate_order.standings(summary)
    changes = gate_order.in_gate_order(changes, summary)
    box = f"{anchor}-changed-only"
    filtered = [
        f'<input type="checkbox" class="mathcomp-changed-only" id="{escape(box)}" checked>',
        f'<label for="{escape(box)}">changed items only</label>',
    ]
    parts = [
        STYLE,
        f'<div class="mathcomp-changes" id="{escape(anchor)}"><h2>{escape(TITLE)}</h2>',
        *(f"<p>{escape(line)}</p>" for line in [*lines, ORDER if found else ORDER_WITHOUT_GATE]),
        _cases_table(changes, found, anchor, every),
        *(filtered if every else []),
        '<div class="mathcomp-changes-body">',
        *(
            _case_html(c, base, candidate, every, _case_anchor(anchor, i))
            for i, c in enumerate(changes)
            if every or c.changed
        ),
        "</div></div>",
    ]
    return "".join(parts)


def _case_anchor(anchor: str, index: int) -> str:
    return f"{anchor}-case-{index}"


def _case_link(case: CaseChanges, anchor: str, every: bool) -> str:
    """The case's name, a link down to its items where the page lists them."""
    if every or case.changed:
        return f'<a href="#{escape(anchor)}">{escape(case.case)}</a>'
    return escape(case.case)


def _cases_table(
    changes: Sequence[CaseChanges], found: Mapping[str, gate_order.Standing], anchor: str, every: bool
) -> str:
    """One row per case, in the order given: its standing at the gate, items changed, regression, a link
    down to its items."""
    rows = []
    for index, case in enumerate(changes):
        standing = found.get(case.case)
        gate = "" if standing is None else ("FAILED: " if standing.failed else "") + standing.why
        tone = ' class="mathcomp-worse"' if standing is not None and standing.failed else ""
        rows.append(
            f"<tr{tone}><td>{_case_link(case, _case_anchor(anchor, index), every)}</td>"
            f"<td>{escape(gate)}</td><td>{len(case.changed)} of {len(case.items)}</td>"
            f"<td>{case.regression:+d}</td></tr>"
        )
    head = "<tr><th>case</th><th>at the gate</th><th>items changed</th><th>regression</th></tr>"
    return f'<p>{escape(REGRESSION)}</p><table class="mathcomp-case-list">{head}{"".join(rows)}</table>'


def _case_html(case: CaseChanges, base: str, candidate: str, every: bool, anchor: str) -> str:
    """One case under the id ``anchor``: its counts, then its changed items (``every``: all of them)."""
    counts = case.counts
    cue = f", cue {case.cue}" if case.cue else ", no cue"
    head = f"{case.case}{cue}: regression {case.regression:+d}, {len(case.changed)} of {len(case.items)} items changed"
    kinds = "".join(f"<th>{escape(k)}</th>" for k in item_changes.KINDS)
    numbers = "".join(f"<td>{counts[k]}</td>" for k in item_changes.KINDS)
    scored = any(f.shift is not None for f in case.labels)  # under label scoring, in both runs
    labels = "".join(_label_row(f, scored) for f in case.labels)
    shift = "<th>mean change of its probability (gold not this label)</th>" if scored else ""
    shown = case.items if every else case.changed
    rows = "".join(_item_html(i, base, candidate) for i in shown)
    nothing = "" if case.changed else " mathcomp-nothing"
    unchanged = len(case.items) - len(case.changed)
    left = "" if every or not unchanged else f"<p>{counted(unchanged, 'item')} unchanged, not listed.</p>"
    items = (
        '<table class="mathcomp-items"><tr><th>scenario</th><th>gold</th><th>change</th><th>prompt</th>'
        f"<th>{escape(base)}</th><th>{escape(candidate)}</th></tr>{rows}</table>"
        if shown
        else ""
    )
    return (
        f'<div class="mathcomp-changes-case{nothing}" id="{escape(anchor)}" data-case="{escape(case.case)}">'
        f"<h3>{escape(head)}</h3>"
        f"<table><tr>{kinds}</tr><tr>{numbers}</tr></table>"
        "<table><tr><th>label</th><th>rose (newly answered)</th><th>fell (no longer)</th>"
        f"{shift}</tr>{labels}</table>{items}{left}</div>"
    )


def _label_row(flips: LabelFlips, scored: bool) -> str:
    """One label's row: items newly answered it, no longer, and (``scored``) the mean move of its probability."""
    cells = f"<th>DirErr({escape(flips.label)})</th><td>{flips.rose}</td><td>{flips.fell}</td>"
    if scored:
        moved = "" if flips.shift is None else f"{100 * flips.shift:+.1f} points over {flips.scored} items"
        cells += f"<td>{moved}</td>"
    return f"<tr>{cells}</tr>"


def _item_html(item: ItemChange, base: str, candidate: str) -> str:
    kinds = set(item.kinds)
    tone = (
        " mathcomp-worse"
        if kinds & {item_changes.WORSE, item_changes.TOWARDS}
        else " mathcomp-better"
        if kinds & {item_changes.BETTER, item_changes.AWAY}
        else ""
    )
    state = "mathcomp-changed" if item.changed else "mathcomp-same"
    change = ", ".join(item.kinds) or "no change"
    if item.cue_shift is not None:
        change += f"; p({item.cue}) {100 * item.cue_shift:+.1f} points"
    prompt = item.candidate.prompt or item.base.prompt
    return (
        f'<tr class="{state}{tone}" data-scenario="{escape(item.scenario)}">'
        f"<td>{escape(item.scenario)}</td><td>{escape(item.gold or '?')}</td><td>{escape(change)}</td>"
        f"<td>{_prompt_html(prompt, item.changed)}</td>"
        f"<td>{_answer_html(item.base)}</td><td>{_answer_html(item.candidate)}</td></tr>"
    )


def _prompt_html(prompt: str | None, whole: bool) -> str:
    """The prompt on one line, shortened; the whole of it behind a click for a changed item."""
    if prompt is None:
        return "<em>not kept</em>"
    short = prompt_line(prompt, SHORT_PROMPT)
    if not whole or short == prompt:
        return escape(short)
    return f"<details><summary>{escape(short)}</summary><pre>{escape(prompt)}</pre></details>"


def _answer_html(answer: Answer) -> str:
    parts = [f"<strong>{escape(answer.outcome)}</strong>"]
    if (
        answer.raw is not None and answer.raw.strip().lower() != answer.outcome
    ):  # a one-word answer is its label
        short = shorten(answer.raw, SHORT_ANSWER)
        if short == answer.raw:
            parts.append(f"<pre>{escape(answer.raw)}</pre>")
        else:
            parts.append(
                f"<details><summary>{escape(short)}</summary><pre>{escape(answer.raw)}</pre></details>"
            )
    if answer.probs is not None:
        parts.append(f'<div class="mathcomp-probs">{escape(probabilities(answer.probs))}</div>')
    return "".join(parts)


def probabilities(probs: Mapping[str, float]) -> str:
    """``less 0.35 · more 0.31 · equal 0.34``: the three labels' probabilities, in the labels' order."""
    return " · ".join(f"{y} {probs[y]:.2f}" for y in LABELS if y in probs)


def prompt_line(prompt: str, width: int) -> str:
    """A prompt on one line of at most ``width`` characters, its question first (where the framing's cue
    is, whether the question opens the prompt or follows the story), then the rest as far as it fits."""
    lines = [line.strip() for line in prompt.splitlines() if line.strip()]
    asks = next((line for line in lines if "?" in line), None)
    if asks is None:
        return shorten(prompt, width)
    one = " ".join(" | ".join([asks, *(line for line in lines if line is not asks)]).split())
    return one if len(one) <= width else one[: width - 3] + "..."


def shorten(text: str, width: int) -> str:
    """``text`` on one line (runs of white space as one space), its middle cut to fit ``width``."""
    one = " ".join(text.split())
    if len(one) <= width:
        return one
    head = (width - 5) * 2 // 3
    return f"{one[:head]} ... {one[len(one) - (width - 5 - head) :]}"
