"""The nights a folder of records holds: each record's summary.json read and checked as history reads it
(history/fields.py), its verdict line, where it stands (INCOMPLETE, new failures, known failures only,
passed), when it ran and which of its pages it keeps; one record per run, newest first; the newest night of
each model.

Nothing is read through a symbolic link (plain_files): a record folder that is a link, or whose summary.json
is, is skipped; a page that is a link is left out of the night, each with a line naming it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import summary_format
from ..history import groups
from ..history.fields import load_night
from ..record.night import PAGES
from ..record.packed import SUFFIX
from ..record.plain_files import LINKED
from ..records import results
from ..report.standalone import DamagedRunError
from ..verdict import of_run
from ..verdict.standing import KNOWN
from . import night_summary

INCOMPLETE = "INCOMPLETE"
FAILED = "FAILED"
KNOWN_ONLY = "KNOWN FAILURES"
PASSED = "PASSED"
STANDINGS = (INCOMPLETE, FAILED, KNOWN_ONLY, PASSED)
"""Where a night stands, in the index's order: what needs a look first."""


Warn = Callable[[str], None]


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
    """When it ran (``started``, the run id's local time, as ``2026-11-27 03:41:33``), "" when unknown."""
    folder: Path
    pages: tuple[str, ...]
    """Which of PAGES the record keeps (packed, ``report.html.gz``, or plain, as records written before)."""
    started: dt.datetime | None
    """When the run started (see ``started``), None when its run id does not say."""
    summary: Mapping[str, Any] = field(compare=False, repr=False)
    """The record's summary.json, less what the site's pages do not read (night_summary)."""

    @property
    def rank(self) -> int:
        return STANDINGS.index(self.standing)

    def source(self, page: str) -> Path:
        """The file the record keeps ``page`` in: packed where it is, else plain."""
        packed = self.folder / (page + SUFFIX)
        return packed if packed.is_file() and not packed.is_symlink() else self.folder / page

    @property
    def run(self) -> str:
        """The run id the summary carries (the folder's name, unless the folder was renamed)."""
        return str(self.summary["run_id"])


def started(summary: Mapping[str, Any], folder: Path) -> dt.datetime | None:
    """When the run started: the time its summary's run id starts with (results.run_started), else the time
    the folder's name starts with; None when neither says (summary.json keeps no other time)."""
    return results.run_started(str(summary["run_id"])) or results.run_started(folder.name)


def _pages(folder: Path, warn: Warn) -> tuple[str, ...]:
    """Which of PAGES ``folder`` holds as files of its own, packed or plain; ``warn`` hears of each file
    that is a link (never followed)."""
    kept = []
    for name in PAGES:
        found = False
        for path in (folder / (name + SUFFIX), folder / name):
            if path.is_symlink():
                warn(f"{path}: {LINKED}; the night is published without it")
            elif path.is_file():
                found = True
        if found:
            kept.append(name)
    return tuple(kept)


def read_night(folder: Path, warn: Warn) -> Night:
    """The night ``folder`` records; DamagedRunError naming the file when it is not a record history reads
    (or its summary.json is a link). ``warn`` hears of each page left out for being a link."""
    if (path := summary_format.path_in(folder)).is_symlink():
        raise DamagedRunError(f"{path}: {LINKED}; expected the record's own file")
    summary = load_night(folder)
    verdict = of_run.verdict(summary)
    begun = started(summary, folder)
    ran = "" if begun is None else begun.strftime("%Y-%m-%d %H:%M:%S")
    return Night(
        folder.name,
        str(summary["model"]),
        standing(summary, verdict),
        verdict.line,
        ran,
        folder,
        _pages(folder, warn),
        begun,
        night_summary.reduced(summary),
    )


def record_folders(records_dir: Path) -> list[Path]:
    """Every folder of ``records_dir`` holding a summary.json (or summary.json.gz), or a link to one (a staged
    record's hidden folder holds it one level down, so it is not one), by name."""
    held = (p for p in records_dir.iterdir() if p.is_dir())
    found = (p for p in held if (s := summary_format.path_in(p)).is_file() or s.is_symlink())
    return sorted(found, key=lambda p: p.name)


def _refusal(folder: Path) -> str | None:
    """Why the folder ``folder`` is no record to read, in one line naming it; None when it may be one."""
    if folder.is_symlink():
        return f"{folder}: {LINKED}; expected a record's folder inside the records folder"
    if not results.safe_run_id(folder.name):
        return (
            f"{folder}: expected a run id as the folder's name (letters, digits, '.', '_', '-', '+'; "
            "a letter or digit first)"
        )
    return None


def _age(night: Night) -> tuple[bool, dt.datetime, str]:
    return night.started is not None, night.started or dt.datetime.min, night.run_id


def newest_first(nights: Sequence[Night]) -> list[Night]:
    """``nights``, newest first by when each run started (``started``: its run id's time). A night whose run
    id tells no time (``nightly-2025-01-01``) is older than every night whose run id does; among such nights,
    and between nights of one time, the folder's name decides, the last in RECORDS_DIR's order first."""
    return sorted(nights, key=_age, reverse=True)


def _preferred(night: Night) -> tuple[bool, int, str]:
    """Which of two records of one run is published: the one whose folder is named by the run id (as
    `mathcomp record` and `mathcomp keep` write it), else the one whose summary.json was written last."""
    try:
        written = summary_format.path_in(night.folder).stat().st_mtime_ns
    except OSError:
        written = 0
    return night.run_id == night.run, written, night.run_id


def one_per_run(nights: Sequence[Night]) -> tuple[list[Night], list[str]]:
    """One night per run id of the summaries (``_preferred`` decides which), and a line for each other record
    of the same run, naming both."""
    runs: dict[str, list[Night]] = {}
    for night in nights:
        runs.setdefault(night.run, []).append(night)
    kept: list[Night] = []
    lines: list[str] = []
    for run, same in runs.items():
        first, *others = sorted(same, key=_preferred, reverse=True)
        kept.append(first)
        why = "named by the run id" if first.run_id == run else "its summary.json written last"
        for other in others:
            lines.append(f"{other.folder}: a second record of run {run}; published {first.folder} ({why})")
    return kept, lines


def read(records_dir: Path, skip: Warn) -> tuple[list[Night], list[str]]:
    """Every night ``records_dir`` holds, one per run, newest first (``newest_first``), and a line for each
    record left out (damaged, a link, a folder name that is no safe run id, a second record of one run);
    ``skip`` hears each line as it is found, and of each page left out for being a link (not counted)."""
    nights: list[Night] = []
    skipped: list[str] = []
    for folder in record_folders(records_dir):
        try:
            if (refused := _refusal(folder)) is not None:
                raise DamagedRunError(refused)
            nights.append(read_night(folder, skip))
        except DamagedRunError as exc:
            skipped.append(str(exc))
            skip(str(exc))
    nights, twice = one_per_run(nights)
    for line in twice:
        skipped.append(line)
        skip(line)
    return newest_first(nights), skipped


def by_model(nights: Sequence[Night]) -> list[list[Night]]:
    """Each model's nights (newest first, as ``nights`` are), the models ordered by where their newest
    night stands (INCOMPLETE first, then FAILED, KNOWN_ONLY, PASSED), then by name. A stand-in joins the
    model of the run its model names (history/groups.py joins: ``mathcomp-tiny`` and its resolved
    ``hf:fixtures/models/mathcomp-tiny`` are one model), as it does in history."""
    oldest = list(reversed(nights))
    joined = groups.joins([n.summary for n in oldest])
    found: dict[str, list[Night]] = {}
    for night, j in reversed(list(zip(oldest, joined, strict=True))):
        found.setdefault(night.model if j is None else oldest[j].model, []).append(night)
    return sorted(found.values(), key=lambda group: (group[0].rank, group[0].model))
