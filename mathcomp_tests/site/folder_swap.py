"""Put a new folder where an old one was in one step: a reader sees the whole old folder or the whole new
one, never half of either. On Linux the two names are exchanged at once (renameat2 with RENAME_EXCHANGE);
where the system or the file system cannot, the old folder is moved aside and the new one renamed in its
place (for that moment the name is missing, never half written)."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2


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


def staging(target: Path) -> Path:
    """A new empty folder beside ``target`` (same file system, so it can be renamed there), with the mode a
    plain mkdir would give it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    return folder


def replace(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target`` (a sibling), the folder there before removed after."""
    if not target.exists():
        new.rename(target)
        return
    if _exchange(new, target):
        shutil.rmtree(new)  # now the old folder
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    target.rename(old / target.name)
    new.rename(target)
    shutil.rmtree(old)
