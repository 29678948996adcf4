"""One night as `mathcomp record` writes it, RECORD_DIR/<run-id>/: what it holds (FILES), its files staged
in a hidden folder inside RECORD_DIR, then the finished folder renamed into place in one step. An existing
night is never replaced: settling says whether it holds the same files, byte for byte, or others.

A night holds the run's summary.json and its pages gzipped (``summary.json.gz``, ``report.html.gz``,
``diff.html.gz``: a tenth to a twentieth of the files); a night written before they were kept packed holds
plain files (``summary.json``, ``report.html``), and is read as well."""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..records.results import REPORT
from ..summary_format import NAME as SUMMARY
from ..summary_format import PACKED
from .packed import SUFFIX

DIFF = "diff.html"
"""The item diff of the night against its baseline (`mathcomp diff BASELINE RUN_DIR --html`), kept as
``diff.html.gz``."""
PAGES = (REPORT, DIFF)
"""The pages a night may keep beside its summary.json, in the order the site links them: the run's own
report (pytest-html) and its diff."""
FILES = (PACKED, *(page + SUFFIX for page in PAGES), SUMMARY, *PAGES)
"""Every file a night may hold: its summary and pages packed, or (nights written before) plain."""

WRITTEN = "written"
IDENTICAL = "identical"
DIFFERENT = "different"


@contextmanager
def staged(record_dir: Path, run_id: str) -> Iterator[Path]:
    """An empty folder named ``run_id`` to fill, inside a hidden folder of ``record_dir`` (so that no reader
    of RECORD_DIR takes it for a night); whatever is left of it is removed at the end."""
    record_dir.mkdir(parents=True, exist_ok=True)
    holder = Path(tempfile.mkdtemp(prefix=f".{run_id}.new-", dir=record_dir))
    try:
        folder = holder / run_id
        folder.mkdir()
        yield folder
    finally:
        shutil.rmtree(holder, ignore_errors=True)


def same_files(a: Path, b: Path) -> bool:
    """Whether the folders ``a`` and ``b`` hold the same file names with the same bytes."""
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def settle(folder: Path, target: Path) -> str:
    """Rename the staged ``folder`` to ``target`` (WRITTEN), unless ``target`` exists: then nothing moves,
    and IDENTICAL or DIFFERENT says whether it holds what ``folder`` does."""
    if target.exists() or target.is_symlink():
        return IDENTICAL if target.is_dir() and same_files(folder, target) else DIFFERENT
    folder.rename(target)
    return WRITTEN
