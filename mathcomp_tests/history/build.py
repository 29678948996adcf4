"""The history page of a reports folder (`mathcomp history REPORTS_DIR`): every finished run folder in it,
oldest first, each summary.json loaded as history reads it (fields.py), drawn by page.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .. import summary_format
from ..report.standalone import DamagedRunError, RunFolderError, page
from . import page as history_page
from .fields import load_night

Skip = Callable[[str], None]


def run_folders(reports_dir: Path) -> list[Path]:
    """Every finished run under ``reports_dir``, oldest first (run ids start with their time)."""
    if not reports_dir.is_dir():
        raise RunFolderError(f"{reports_dir}: no such reports folder")
    found = [
        p
        for p in reports_dir.iterdir()
        if p.is_dir() and not p.is_symlink() and summary_format.path_in(p).exists()
    ]
    return sorted(found, key=lambda p: p.name)


def history(
    reports_dir: Path, group: str | None = None, skip: Skip | None = None
) -> tuple[str, list[history_page.RunRow]]:
    """The history page, and a row for every run, oldest first, each in its group (see page.py).

    With ``skip``, a run folder whose summary.json is damaged (or holds a field of the wrong type) is left
    out, ``skip`` hears why, naming it, and the page counts it (one bad night does not hide the others);
    without, it raises DamagedRunError."""
    summaries, skipped = [], []
    for run_dir in run_folders(reports_dir):
        try:
            summaries.append(load_night(run_dir))
        except DamagedRunError as exc:
            if skip is None:
                raise
            skip(str(exc))
            skipped.append(str(exc))
    found = history_page.rows(summaries, group)
    return page(f"MathComp history: {reports_dir}", history_page.page_body(found, skipped)), found
