"""The branch's whole set of records written out as a folder (ALL_RECORDS) that `mathcomp history` reads:
``<run-id>/summary.json`` and the rest, replaced whole. A folder that holds anything but records is never
replaced, so that a mistyped --out cannot take a user's files."""

from __future__ import annotations

import os
import secrets
import shutil
import tarfile
import tempfile
from pathlib import Path

from ..record.night import FILES
from ..records.results import safe_run_id
from . import git

PAGE = "history.html"
"""What `mathcomp history ALL_RECORDS` writes beside the records: an ALL_RECORDS holding it is still ours."""


def foreign(out: Path) -> str | None:
    """Why ``out`` must not be replaced (it holds something that is not a record), naming it; None when it
    can be: it is not there, or an empty folder, or one of records as this command writes them."""
    if not out.exists() and not out.is_symlink():
        return None
    if out.is_symlink() or not out.is_dir():
        return f"{out}: not a folder"
    for entry in out.iterdir():
        if entry.name == PAGE and entry.is_file():
            continue
        if not entry.is_dir() or entry.is_symlink() or not safe_run_id(entry.name):
            return f"{entry}: not a night record"
        for item in entry.iterdir():
            if item.name not in FILES or not item.is_file() or item.is_symlink():
                return f"{item}: not a file of a night record"
    return None


def _extract(archive: Path, into: Path) -> int:
    """The records of a tar of the branch's tree extracted into ``into``; how many."""
    count = 0
    with tarfile.open(archive) as tar:
        for member in tar:
            parts = member.name.split("/")
            if not (member.isfile() and len(parts) == 2 and safe_run_id(parts[0]) and parts[1] in FILES):
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            folder = into / parts[0]
            if not folder.exists():
                folder.mkdir()
                count += 1
            (folder / parts[1]).write_bytes(source.read())
    return count


def _umask_folder_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o777 & ~umask


def write(git_dir: Path, tip: str | None, out: Path) -> int:
    """Every record of ``tip``'s tree (none when there is no branch) written to ``out``, which is replaced
    whole: built beside it, then renamed into place. Returns how many records. OSError when it cannot be."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        count = 0
        if tip is not None:
            archive = staging.with_name(staging.name + ".tar")
            try:
                git.run(["archive", "--format=tar", f"--output={archive}", tip], git_dir=git_dir)
                count = _extract(archive, staging)
            finally:
                archive.unlink(missing_ok=True)
        os.chmod(staging, _umask_folder_mode())
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count


def _swap(staging: Path, out: Path) -> None:
    """``staging`` in ``out``'s place; the old ``out`` removed once the new one is there."""
    if not out.exists():
        os.rename(staging, out)
        return
    old = out.with_name(f".{out.name}.old-{secrets.token_hex(4)}")
    os.rename(out, old)
    os.rename(staging, out)
    shutil.rmtree(old, ignore_errors=True)
