"""Where a merge writes, checked before anything is read or written: ``--out`` is a new (or empty) folder named
plainly (no ``..``, no symbolic link), built beside itself under a hidden name and swapped in whole, so a merge
stopped at any moment leaves no folder at ``--out`` marked complete; ``--update-baseline`` is a file that can
be written and is none of the merge's inputs. Each refusal is one line (ShardFolderError: a usage error)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .shards import ShardFolderError


def check_out(out: Path) -> None:
    """ShardFolderError unless ``out`` can become the merged run's folder."""
    if ".." in out.parts:
        raise ShardFolderError(
            f"--out {out}: a path through '..' names another folder than it spells; give the merged run's "
            "folder without '..'"
        )
    if out.is_symlink():
        raise ShardFolderError(
            f"--out {out}: is a symbolic link (to {os.readlink(out)}); give a new folder for the merged run"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ShardFolderError(
            f"--out {out}: exists and is not an empty folder; give a new folder for the merged run"
        )


def check_update_baseline(target: Path | None, inputs: Sequence[Path], out: Path) -> None:
    """ShardFolderError unless ``target`` (``--update-baseline``) is a file the merge may write: not a folder,
    not inside a shard's folder (``inputs``) or ``--out``, and writable. The baseline the merge compares with
    may be it, as in a whole run (compared with, then replaced)."""
    if target is None:
        return
    if target.is_dir():
        raise ShardFolderError(f"--update-baseline {target}: is a folder; give the baseline file's path")
    resolved = target.resolve()
    for given in [*inputs, out]:
        where = given.resolve()
        if resolved == where or where in resolved.parents:
            raise ShardFolderError(
                f"--update-baseline {target}: is inside {given}, one of the merge's own inputs or its --out; "
                "write the baseline elsewhere"
            )
    parent = resolved.parent
    writable = (
        os.access(target, os.W_OK) if target.exists() else parent.is_dir() and os.access(parent, os.W_OK)
    )
    if not writable:
        raise ShardFolderError(
            f"--update-baseline {target}: cannot be written here; give a file you can write"
        )


@contextmanager
def built_beside(out: Path) -> Iterator[Path]:
    """A new hidden folder beside ``out`` to build the merged run in; ``swap_in`` moves it to ``out``.
    Whatever is left of it when the block ends (the merge stopped) is removed."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        building = out.parent / f".{out.name}.merging-{secrets.token_hex(4)}"
        building.mkdir()
    except OSError as exc:
        raise ShardFolderError(f"--out {out}: cannot be written ({exc.strerror or exc})") from exc
    try:
        yield building
    finally:
        shutil.rmtree(building, ignore_errors=True)


def swap_in(building: Path, out: Path) -> None:
    """The built folder becomes ``out`` in one rename (an empty ``out`` is removed first)."""
    if out.is_dir() and not out.is_symlink() and not any(out.iterdir()):
        out.rmdir()
    os.rename(building, out)
