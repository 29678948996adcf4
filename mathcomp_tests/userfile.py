"""Replace a file that belongs to the user (a baseline, say) atomically, as they would expect of any tool:
through a symbolic link to the file it points to, keeping that file's permission bits, and a new file
created with the user's umask, never the 0600 of a private temporary file."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def target(path: Path) -> Path:
    """The file a write to ``path`` replaces: the end of its chain of links (a dangling link's target too)."""
    return Path(os.path.realpath(path))


def _umask_mode() -> int:
    """The permission bits a plain ``open(path, "w")`` would give a new file (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def replace_text(path: Path, text: str) -> Path:
    """Write ``text`` to the file ``path`` names (following links), replacing it atomically: a temporary file
    in the same folder, flushed to disk, given the old file's mode (or the umask's), then os.replace. A write
    stopped halfway leaves the old file. Returns the file written."""
    real = target(path)
    try:
        mode = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        mode = _umask_mode()
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(name, real)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return real
