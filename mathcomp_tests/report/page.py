"""The run report's sections in reading order, shared by the pytest-html page and the rebuilt one: the
verdict, what a pass there does not say (cases at chance, cases that could not see a rise), the run's
facts, the figures, then the long tables (cases, cue invariance, protocols)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..baseline_file import reader
from ..baseline_file.format import BaselineError
from ..data.generated_draw import GENERATED_PREFIX
from . import html, item_changes, pooled, protocols, sections, unseen
from .headline import verdict_html
from .invariance import invariance_html

PYTEST_HTML_ORDER = """<style>
body {display: flex; flex-direction: column}
body > * {order: 2}
body > #title, body > #title + p, body > .summary {order: 0}
body > #environment-header, body > #environment {order: 1}
</style>"""
"""pytest-html puts its Environment table above the summary; this moves the summary, where the verdict is,
right under the title (the page's elements, not their content, change places)."""


def run_sections(
    summary: Mapping[str, Any] | None,
    cases: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    model: str,
    baseline: pooled.Answers | None = None,
    near: Sequence[Path] = (),
) -> list[str]:
    """HTML fragments, in order; ``summary`` is None only when the run ended before summary.json; ``near``:
    folders where a baseline named by a relative path may lie (a run folder's parents, when rebuilt).

    ``cases`` are every case the run scored, test_generated's (``generated:<id>``) included: each is a row
    of the case table. The figures and the protocol comparison pool test_framing's cases only (the
    generated cases ask other scenarios under the same conditions)."""
    fixed = [c for c in cases if not str(c["case"]).startswith(GENERATED_PREFIX)]
    parts = []
    if summary is not None:
        parts += [verdict_html(summary), unseen.section_html(summary), html.run_header_html(summary)]
    parts.append(sections.run_figures_html(fixed, records, baseline))
    parts.append(html.summary_table_html(model, cases))
    if summary is not None:
        parts.append(invariance_html(summary.get("invariance")))
    parts.append(protocols.protocols_html(fixed, summary))
    parts.append(item_changes.section_html(summary, records, near))
    return [p for p in parts if p]


def baseline_answers(summary: Mapping[str, Any] | None, near: Sequence[Path] = ()) -> pooled.Answers | None:
    """The baseline's per-item answers (case -> scenario -> outcome) from the file or run folder that
    summary.json names as its baseline, looked for as written, then in each folder of ``near``; None when
    the run had none, compared with a model (--baseline-model), or the file is gone or unreadable."""
    source = ((summary or {}).get("baseline") or {}).get("source")
    if not source:
        return None
    for path in (Path(source), *(folder / source for folder in near)):
        if path.exists():
            try:
                return reader.load(path).cases
            except BaselineError:
                return None
    return None
