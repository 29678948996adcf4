"""Reports built from finished run folders, without a model and without pytest (`mathcomp report`): one run
rebuilt, or several runs side by side; each page one self-contained HTML file. Also what every page built
from a run folder shares: its summary.json loaded (``load_summary``), the errors that name a folder that is
none or is damaged, and the page around a body (``page``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from .. import run_folder, summary_format
from . import html, pooled, sections
from .headline import every_case
from .page import baseline_answers, run_sections


class RunFolderError(ValueError):
    """A path that is not a finished run folder; the message names it."""


class DamagedRunError(RunFolderError):
    """A run folder whose summary.json or results.jsonl cannot be read as the suite wrote it."""


SUMMARY_KEYS = ("run_id", "model", "cases", "cases_run", "cases_failed")
"""What the pages read from every summary.json."""

Warn = Callable[[str], None]


def load_summary(run_dir: Path) -> dict[str, Any]:
    """summary.json of a finished run (summary_format.load: its version checked), with the keys the pages
    read."""
    path = summary_format.path_in(run_dir)
    expected = summary_format.EXPECTED
    try:
        summary = summary_format.load(run_dir)
    except summary_format.MissingSummary as exc:
        raise RunFolderError(str(exc)) from exc
    except summary_format.SummaryError as exc:
        raise DamagedRunError(str(exc)) from exc
    missing = [k for k in SUMMARY_KEYS if k not in summary]
    if missing:
        raise DamagedRunError(f"{path}: no {', '.join(map(repr, missing))}; {expected}")
    if not isinstance(summary["cases"], list):
        raise DamagedRunError(f"{path}: 'cases' is not a list; {expected}")
    return summary


def load_run(run_dir: Path, warn: Warn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary.json, results.jsonl records) of a finished run; ``warn`` hears of a cut last record."""
    summary = load_summary(run_dir)
    try:
        found = run_folder.read(run_dir / run_folder.RESULTS, strict=False)
    except run_folder.RunFolderError as exc:
        raise DamagedRunError(str(exc)) from exc
    if found.note is not None:
        warn(found.note)
    return summary, found.records


def page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{escape(title)}</title>'
        "<style>body{font-family:sans-serif;margin:24px;color:#222} h1{font-size:22px}</style>"
        f"{html.STYLE}</head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def run_body(
    summary: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    baseline: pooled.Answers | None = None,
    near: Sequence[Path] = (),
) -> str:
    cases = every_case(summary)
    parts = [*run_sections(summary, cases, records, str(summary["model"]), baseline, near), "<h2>Cases</h2>"]
    for case in cases:
        if case.get("scores") is None:
            error = str(case.get("error") or "no scores")
            parts.append(f"<h3>{escape(case['case'])} (ERROR)</h3><pre>{escape(error)}</pre>")
            continue
        verdict = "pass" if case["passed"] else "FAIL: " + ", ".join(case["breaches"])
        parts.append(f"<h3>{escape(case['case'])} ({escape(verdict)})</h3>{html.case_extra_html(case)}")
    return "".join(parts)


def rebuild(run_dir: Path, warn: Warn) -> str:
    summary, records = load_run(run_dir, warn)
    near = run_dir.resolve().parents[:2]
    body = run_body(summary, records, baseline_answers(summary, near=near), near)
    return page(f"MathComp report: {summary['model']} ({summary['run_id']})", body)


def combine(run_dirs: Sequence[Path]) -> str:
    """Models side by side: one heat-map row per run, then each run's header and table."""
    summaries = [load_summary(d) for d in run_dirs]
    names = _names(summaries)
    parts = [sections.combined_figures_html([(n, s["cases"]) for n, s in zip(names, summaries, strict=True)])]
    for name, summary in zip(names, summaries, strict=True):
        parts.append(f"<h2>{escape(name)}</h2>")
        parts.append(html.run_header_html(summary))
        parts.append(html.summary_table_html(summary["model"], every_case(summary)))
    return page(f"MathComp report: {len(summaries)} runs side by side", "".join(parts))


def _names(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each run's model, with the run id where two runs share a model."""
    models = [str(s["model"]) for s in summaries]
    return [
        m if models.count(m) == 1 else f"{m} ({s['run_id']})" for m, s in zip(models, summaries, strict=True)
    ]
