"""What `mathcomp cache stats|prune|clear` does to the response cache: count its entries per model and
revision, delete some, or remove the file. The command line is in cli/cache.py; what a cache file is (and
whether it is this suite's), in backends/cache/file.py.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from ..backends.cache.file import CACHE_FILE, COMPANIONS, DamagedCacheError, is_damage
from ..backends.models import UnknownModelError, resolve
from ..rootdir import cache_dir

DAY = 86400.0


def cache_path(given: str | None) -> Path:
    """The cache file under --cache-dir, else $MATHCOMP_CACHE_DIR, else .mathcomp-cache at the rootdir
    (the folder the suite's plugin uses when run from here)."""
    return cache_dir(given) / CACHE_FILE


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        if is_damage(exc):
            raise DamagedCacheError(path, str(exc)) from exc
        raise


def remove(path: Path) -> list[Path]:
    """Delete the cache file and sqlite's files beside it; the paths removed."""
    removed = []
    for file in (path, *(path.with_name(path.name + s) for s in COMPANIONS)):
        with contextlib.suppress(FileNotFoundError):
            file.unlink()
            removed.append(file)
    return removed


def model_names(model: str) -> list[str]:
    """The names entries of ``model`` are stored under: as typed, and as its alias resolves."""
    names = [model]
    with contextlib.suppress(UnknownModelError):
        names.append(resolve(model).resolved)
    return list(dict.fromkeys(names))


def _where(model: str | None, older_than: float | None) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if model is not None:
        names = model_names(model)
        # an API deployment is stored as `<group>@<server>`; a bare group name selects every server of it
        clauses.append("(" + " OR ".join(["model = ? OR model LIKE ? ESCAPE '\\'"] * len(names)) + ")")
        for name in names:
            params += [name, name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "@%"]
    if older_than is not None:
        clauses.append("created < ?")
        params.append(older_than)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def stats(path: Path, model: str | None = None) -> list[str]:
    """One line per model and revision: entries, oldest and newest write."""
    where, params = _where(model, None)
    with _reading(path), contextlib.closing(sqlite3.connect(path)) as db:
        rows = db.execute(
            "SELECT model, revision, COUNT(*), MIN(created), MAX(created) FROM responses"
            f"{where} GROUP BY model, revision ORDER BY model, revision",
            params,
        ).fetchall()
    total = sum(r[2] for r in rows)
    lines = [f"{path}: {total} entries, {path.stat().st_size / 2**20:.1f} MiB on disk"]
    for name, revision, count, oldest, newest in rows:
        lines.append(
            f"  {name}  revision {revision or '-'}: {count} entries, written "
            f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(oldest))} to "
            f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(newest))}"
        )
    return lines


def delete(path: Path, model: str | None = None, older_than_days: float | None = None) -> int:
    """Remove entries (of ``model``, written more than ``older_than_days`` ago); returns how many."""
    cutoff = None if older_than_days is None else time.time() - older_than_days * DAY
    where, params = _where(model, cutoff)
    with _reading(path), contextlib.closing(sqlite3.connect(path, timeout=60)) as db:
        with db:
            removed = db.execute(f"DELETE FROM responses{where}", params).rowcount
        db.execute("VACUUM")
    return int(removed)
