"""The nights given to `mathcomp keep`: each folder ``<run-id>/`` of NEW_RECORDS whose summary.json
history can read, its files, and when its night was.

summary.json says no time of its own: a night's time is its run id's, ``<YYYYmmdd-HHMMSS>-<model>-<hex>``
(records/results.py ``new_run_id``, the runner's local time; UTC on a hosted runner). A record whose run
id starts otherwise has no known night and is never pruned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..history.fields import load_night
from ..record.night import FILES
from ..records.results import safe_run_id
from ..report.standalone import RunFolderError
from ..summary_format import path_in


@dataclass(frozen=True)
class Night:
    """A night to keep: its run id (its folder's name on the branch) and its files, by name."""

    run_id: str
    files: dict[str, bytes]


def _refusal(folder: Path) -> str | None:
    """Why ``folder`` is not a record to keep, in one line naming it; None when it is one."""
    if not safe_run_id(folder.name):
        return (
            f"{folder}: {folder.name!r} is not a run id (expected one path component of letters, digits, "
            "'.', '_', '-', '+', starting with a letter or digit)"
        )
    if (kept := path_in(folder)).is_symlink():
        return f"{kept}: a link; expected the record's own file"
    try:
        summary = load_night(folder)
    except RunFolderError as exc:
        return str(exc)
    if summary["run_id"] != folder.name:
        return f"{kept}: run_id {summary['run_id']!r}; expected the folder's name, {folder.name!r}"
    return None


def _files(folder: Path) -> dict[str, bytes]:
    """The record's files that go on the branch (record/night.py FILES: summary.json and the night's pages,
    packed or plain) that are there, as plain files (a link is not followed out of the folder)."""
    found = {}
    for name in FILES:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            found[name] = path.read_bytes()
    return found


def read_new(records_dir: Path, say: Callable[[str], None]) -> list[Night]:
    """Every record folder of ``records_dir`` that can be kept, by run id; ``say`` hears one line for each
    folder that cannot (it is not pushed; the others still are). A file beside the folders is not a record."""
    kept = []
    for folder in sorted(records_dir.iterdir(), key=lambda p: p.name):
        if not folder.is_dir():
            continue
        if folder.is_symlink():
            say(f"not kept: {folder}: a link; expected a record folder of its own")
            continue
        refused = _refusal(folder)
        if refused is not None:
            say(f"not kept: {refused}")
            continue
        try:
            kept.append(Night(folder.name, _files(folder)))
        except OSError as exc:
            say(f"not kept: {folder}: cannot be read ({exc.strerror or exc})")
    return kept
