"""A dataset's rows and audit findings, computed once per file content and kept in the cache directory.

Verifying 300 rows with sympy and auditing them takes seconds, and every xdist worker loads the dataset:
the result is stored under the file's sha256 and a digest of the code that produced it, so an edited
file or an edited verifier is checked again, and an unchanged one is read back in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

from . import audit, scenarios
from .audit import Finding

_CODE = ("scenarios.py", "equations.py", "numbers.py", "audit.py", "checked.py")
Checked = tuple[list[scenarios.Row], list[list[Finding]]]


def _code_digest() -> str:
    digest = hashlib.sha256()
    for name in _CODE:
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


def load(path: Path, cache_dir: Path | None) -> Checked:
    """Every row of ``path`` with its verification, and each row's audit findings (in row order)."""
    content = path.read_bytes() if path.is_file() else None
    if content is None or cache_dir is None:
        rows = scenarios.read(path)
        return rows, [audit.check(r) for r in rows]
    stored = cache_dir / "checked" / f"{hashlib.sha256(content).hexdigest()[:32]}-{_code_digest()}.pickle"
    try:
        with open(stored, "rb") as fh:
            rows, findings = pickle.load(fh)  # noqa: S301 - our own cache, written just below
        return rows, findings
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, AttributeError):
        pass
    rows = scenarios.read(path)
    findings = [audit.check(r) for r in rows]
    stored.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=stored.parent, suffix=".part")
    with os.fdopen(handle, "wb") as out:
        pickle.dump((rows, findings), out)
    os.replace(temp, stored)
    return rows, findings
