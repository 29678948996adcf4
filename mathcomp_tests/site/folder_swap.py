"""Put a new folder where an old one was in one step: a reader sees the whole old folder or the whole new
one, never half of either. On Linux the two names are exchanged at once (renameat2 with RENAME_EXCHANGE);
where the system or the file system cannot, the old folder is moved aside and the new one renamed in its
place (for that moment the name is missing, never half written).

The new folder is staged beside the target as ``.<name>.new-<8 characters>`` (the old one moved aside as
``.<name>.old-<8 characters>``), each locked (flock) while its build is at work. A build killed before it
cleaned up (SIGKILL, or SIGTERM's default end) leaves its folder there, unlocked: the next build of the same
target removes every such folder beside it that no build holds, and nothing else."""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2
RANDOM = "[a-z0-9_]{8}"
"""The part of a staged folder's name tempfile.mkdtemp draws (8 of its letters, digits and '_')."""


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b`` at once; False where this system cannot (then nothing moved)."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    done = renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _lock(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding its exclusive lock (released when closed, or when the
    process ends however it ends); None when another process holds it."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextmanager
def _locked(prefix: str, parent: Path) -> Iterator[Path]:
    """A new empty folder ``parent/<prefix><8 characters>``, locked while in use, removed (if still there)
    at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    fd = _lock(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if fd is not None:
            os.close(fd)


def left_behind(target: Path) -> list[Path]:
    """The staged folders beside ``target`` (``.<name>.new-*``, ``.<name>.old-*`` as this module names them;
    a link or a file of that name is not one), by name."""
    if not target.parent.is_dir():
        return []
    named = re.compile(rf"\.{re.escape(target.name)}\.(?:new|old)-{RANDOM}")
    found = (p for p in target.parent.iterdir() if named.fullmatch(p.name))
    return sorted(p for p in found if p.is_dir() and not p.is_symlink())


def sweep(target: Path) -> list[Path]:
    """Remove each staged folder beside ``target`` that no build holds (one killed before it cleaned up);
    those removed. A folder another build holds is left to it."""
    removed = []
    for folder in left_behind(target):
        try:
            fd = _lock(folder)
        except OSError:  # gone already, or not ours to open
            continue
        if fd is None:
            continue
        try:
            shutil.rmtree(folder)
            removed.append(folder)
        except OSError:
            pass  # what is left is removed by a later build
        finally:
            os.close(fd)
    return removed


@contextmanager
def staged(target: Path) -> Iterator[Path]:
    """A new empty folder beside ``target`` (same file system, so it can be renamed there), with the mode a
    plain mkdir would give it, locked while in use; whatever is left of it is removed at the end."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(f".{target.name}.new-", target.parent) as folder:
        umask = os.umask(0)
        os.umask(umask)
        folder.chmod(0o777 & ~umask)
        yield folder


def replace(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target`` (a sibling), the folder there before removed after."""
    if not target.exists():
        new.rename(target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now the old folder; what is left, the next build removes
        return
    with _locked(f".{target.name}.old-", target.parent) as old:
        target.rename(old / target.name)
        try:
            new.rename(target)
        except BaseException:
            (old / target.name).rename(target)  # the old folder back in its place
            raise
