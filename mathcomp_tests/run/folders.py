"""The folders a run writes in, checked before any case: a run that cannot write its cache, its report or
its baseline file stops at once, instead of after every case has been asked; and the names of the run
folder's subfolders.

Writing is tried for real (a file made and removed): permission bits do not tell, since root may write
in a folder whose mode says no, and a read-only file system refuses even root.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..settings import Settings

REVEAL_AFTER = "reveal-after"
"""The run folder's subfolder for test_reveal_after's results.jsonl."""
PARTNERS = "partners"
"""The run folder's subfolder for the answers of neutral partners asked beyond the selected cases (by a
project's own check, or the toward-cue test of a run narrowed past its neutral case)."""


class FolderError(ValueError):
    """A folder (or a file's folder) the run must write in and cannot; names the option that gave it."""


def check(s: Settings) -> None:
    """Every folder a run of ``s`` will write in takes files (FolderError names the one that does not):
    the response cache's, the reports folder, and the baseline file's under --update-baseline."""
    if s.cache_path is not None:
        writable_folder(s.cache_path.parent, "--cache-dir")
        not_a_folder(s.cache_path, "--cache-dir", "the response cache file")
    writable_folder(s.reports_dir, "--reports-dir")
    if s.update_baseline is not None:
        writable_file(s.update_baseline, "--update-baseline", "the baseline file")


def writable_folder(path: Path, option: str) -> None:
    """``path`` is a folder this process can write in (made when missing)."""
    if path.exists() and not path.is_dir():
        raise FolderError(f"{option}={path}: a file, not a folder; expected a folder the run can write in")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderError(
            f"{option}={path}: cannot make this folder ({exc.strerror}); give a folder you can write in"
        ) from exc
    _try_writing(path, f"{option}={path}: cannot write in this folder")


def writable_file(path: Path, option: str, what: str) -> None:
    """``path`` can be written as ``what``: not a folder, and its folder takes new files (the file is
    replaced atomically, through a temporary file beside it)."""
    if path.is_dir():
        raise FolderError(f"{option}={path}: a folder, not a file; expected the path of {what}")
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderError(f"{option}={path}: cannot make its folder {folder} ({exc.strerror})") from exc
    _try_writing(folder, f"{option}={path}: cannot write in {folder}")


def not_a_folder(path: Path, option: str, what: str) -> None:
    """The file the run keeps under an option's folder is a file, or not there yet: a folder in its place
    would stop sqlite (or the writer) with an error that names neither the option nor the path."""
    if path.is_dir():
        raise FolderError(
            f"{option}={path.parent}: {path} is a folder; expected {what} there (move the folder away)"
        )


def _try_writing(folder: Path, said: str) -> None:
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".mathcomp-write-check-"):
            pass
    except OSError as exc:
        raise FolderError(f"{said} ({exc.strerror}); give a folder you can write in") from exc
