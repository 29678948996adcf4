"""The nights a folder of records holds: each record's summary.json read and checked as history reads it
(history_records), its verdict line, where it stands (INCOMPLETE, new failures, known failures only,
passed), when it ran and which of its pages it keeps; the newest night of each model."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import summary_format
from ..records import results
from ..report.standalone import DamagedRunError, load_record
from ..verdict import of_run
from ..verdict.standing import KNOWN

DIFF = "diff.html"
"""The item diff of the night against its baseline (`mathcomp diff BASELINE RUN_DIR --html`)."""
PAGES = (results.REPORT, DIFF)
"""The pages a record may keep beside its summary.json, copied into the site as they are."""

INCOMPLETE = "INCOMPLETE"
FAILED = "FAILED"
KNOWN_ONLY = "KNOWN FAILURES"
PASSED = "PASSED"
STANDINGS = (INCOMPLETE, FAILED, KNOWN_ONLY, PASSED)
"""Where a night stands, in the index's order: what needs a look first."""


Warn = Callable[[str], None]


def when(run_id: str) -> str:
    """``2026-11-27 03:41:33`` from a run id (the runner's local time it starts with); "" when it has none."""
    started = results.run_started(run_id)
    return "" if started is None else started.strftime("%Y-%m-%d %H:%M:%S")


def standing(summary: Mapping[str, Any], verdict: of_run.Verdict) -> str:
    """INCOMPLETE; FAILED (a failure the base does not share, one with no baseline to tell, another check, a
    pass not earned); KNOWN_ONLY (every failed case fails on the base too); else PASSED."""
    if summary_format.is_incomplete(summary):
        return INCOMPLETE
    failed = of_run.failed_cases(summary)
    if verdict.passed and not failed:
        return PASSED
    if failed and not of_run.other_failures(summary) and all(c.get("standing") == KNOWN for c in failed):
        return KNOWN_ONLY
    return FAILED


@dataclass(frozen=True)
class Night:
    """One record: its folder's name (the run id), the model it tested, its verdict and its pages."""

    run_id: str
    model: str
    standing: str
    verdict: str
    ran: str
    """When it ran (the run id's local time), "" when the run id does not say."""
    folder: Path
    pages: tuple[str, ...]
    """Which of PAGES the record keeps."""

    @property
    def rank(self) -> int:
        return STANDINGS.index(self.standing)


def read_night(folder: Path) -> Night:
    """The night ``folder`` records; DamagedRunError naming the file when it is not a record history reads."""
    summary = load_record(folder)
    verdict = of_run.verdict(summary)
    return Night(
        folder.name,
        str(summary["model"]),
        standing(summary, verdict),
        verdict.line,
        when(folder.name),
        folder,
        tuple(p for p in PAGES if (folder / p).is_file()),
    )


def record_folders(records_dir: Path) -> list[Path]:
    """Every folder of ``records_dir`` holding a summary.json (a staged record's hidden folder holds it one
    level down, so it is not one), by name."""
    return sorted(
        (p for p in records_dir.iterdir() if p.is_dir() and (p / summary_format.NAME).is_file()),
        key=lambda p: p.name,
    )


def read(records_dir: Path, skip: Warn) -> tuple[list[Night], list[str]]:
    """Every night ``records_dir`` holds, newest first, and a line for each record left out (damaged, or a
    folder name that is no safe run id); ``skip`` hears each line as it is found."""
    nights: list[Night] = []
    skipped: list[str] = []
    for folder in record_folders(records_dir):
        try:
            if not results.safe_run_id(folder.name):
                raise DamagedRunError(
                    f"{folder}: expected a run id as the folder's name (letters, digits, '.', '_', '-', '+'; "
                    "a letter or digit first)"
                )
            nights.append(read_night(folder))
        except DamagedRunError as exc:
            skipped.append(str(exc))
            skip(str(exc))
    return sorted(nights, key=lambda n: n.run_id, reverse=True), skipped


def by_model(nights: Sequence[Night]) -> list[list[Night]]:
    """Each model's nights (newest first, as ``nights`` are), the models ordered by where their newest
    night stands (INCOMPLETE first, then FAILED, KNOWN_ONLY, PASSED), then by name."""
    found: dict[str, list[Night]] = {}
    for night in nights:
        found.setdefault(night.model, []).append(night)
    return sorted(found.values(), key=lambda group: (group[0].rank, group[0].model))
