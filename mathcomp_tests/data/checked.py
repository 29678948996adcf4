"""A dataset's rows and audit findings, computed once per file content and kept in the cache directory.

Verifying 300 rows with sympy and auditing them takes seconds, and every xdist worker loads the dataset:
the result is stored under the file's sha256 and a digest of the code that produced it, so an edited
file or an edited verifier is checked again, and an unchanged one is read back in milliseconds. The entry
is plain JSON (checked_format): a damaged or foreign file is ignored and rebuilt, never executed.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from . import audit, checked_format, scenarios
from .checked_format import Checked

_CODE = ("scenarios.py", "equations.py", "numbers.py", "audit.py", "checked.py", "checked_format.py")
__all__ = ["Checked", "load"]


def _code_digest() -> str:
    digest = hashlib.sha256()
    for name in _CODE:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


def load(path: Path, cache_dir: Path | None) -> Checked:
    """Every row of ``path`` with its verification, and each row's audit findings (in row order)."""
    content = path.read_bytes() if path.is_file() else None
    if content is None or cache_dir is None:
        return _check(path)
    sha256 = hashlib.sha256(content).hexdigest()
    stored = cache_dir / "checked" / f"{sha256[:32]}-{_code_digest()}.json"
    try:
        cached = checked_format.loads(stored.read_text(encoding="utf-8"), sha256)
    except (OSError, UnicodeDecodeError):
        cached = None
    if cached is not None:
        return cached
    rows, findings = _check(path)
    _store(stored, checked_format.dumps(rows, findings, sha256))
    return rows, findings


def _check(path: Path) -> Checked:
    rows = scenarios.read(path)
    return rows, [audit.check(r) for r in rows]


def _store(stored: Path, text: str) -> None:
    """Write the entry atomically; a folder that cannot take it only costs the next run a re-check."""
    try:
        stored.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=stored.parent, suffix=".part")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, stored)
    except OSError:
        Path(temp).unlink(missing_ok=True)
