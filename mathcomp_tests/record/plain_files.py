"""The files of a record or a run folder, read only as files of that folder: a symbolic link is never
followed, wherever it points (out of the folder, a link could publish any file the reader can open), and a
copy is made from the file itself, opened without following a link."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import BinaryIO

LINKED = "a symbolic link, never followed"
"""What a line naming a skipped link says after its path."""


def plain(path: Path) -> bool:
    """Whether ``path`` is a file of its folder: a regular file, not a link to one."""
    return path.is_file() and not path.is_symlink()


def _opened(source: Path) -> BinaryIO:
    """``source`` open for reading; OSError when it is a link (ELOOP) or no regular file (EINVAL)."""
    read = os.fdopen(os.open(source, os.O_RDONLY | os.O_NOFOLLOW), "rb")
    if not stat.S_ISREG(os.fstat(read.fileno()).st_mode):
        read.close()
        raise OSError(errno.EINVAL, "not a regular file", str(source))
    return read


def copy(source: Path, target: Path) -> None:
    """Copy the regular file ``source`` to the new file ``target``; OSError when ``source`` is a link (ELOOP)
    or no regular file (EINVAL), and then nothing is written."""
    with _opened(source) as read, open(target, "xb") as written:
        shutil.copyfileobj(read, written)


def read_bytes(source: Path) -> bytes:
    """The bytes of the regular file ``source``; OSError as ``copy`` raises it."""
    with _opened(source) as read:
        return read.read()
