"""What `mathcomp cache stats|prune|clear` does: look into the response cache, trim it, remove a damaged one.

The command line is in cli/cache.py.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from ..rootdir import cache_dir
from .models import UnknownModelError, resolve

CACHE_FILE = "responses.sqlite"
DAY = 86400.0
COMPANIONS = ("-wal", "-shm", "-journal")
"""The files sqlite keeps beside a database, which belong to it."""
APPLICATION_ID = 0x4D434D50
"""`PRAGMA application_id` of every cache this suite creates ("MCMP"): how the cache commands know a file
as their own, even damaged, before they delete anything in it."""
SQLITE_HEADER = b"SQLite format 3\x00"
COLUMNS = ("key", "model", "revision", "text", "input_tokens", "output_tokens", "meta", "created")
"""The responses table's columns: how a cache made before the application_id marker is known."""


class DamagedCacheError(Exception):
    """A cache file sqlite cannot read as a response cache (corrupt, not a database, no table in it)."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path} is damaged ({reason})")
        self.path = path
        self.reason = reason


def cache_path(given: str | None) -> Path:
    """The cache file under --cache-dir, else $MATHCOMP_CACHE_DIR, else .mathcomp-cache at the rootdir
    (the folder the suite's plugin uses when run from here)."""
    return cache_dir(given) / CACHE_FILE


def is_damage(exc: sqlite3.Error) -> bool:
    """A file that is not a readable response cache, as against one busy or read-only just now."""
    name = getattr(exc, "sqlite_errorname", "")
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "no such table: responses" in str(exc)


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        if is_damage(exc):
            raise DamagedCacheError(path, str(exc)) from exc
        raise


def not_ours(path: Path) -> str | None:
    """None when ``path`` is a response cache this suite wrote (its application_id, or, made before that
    marker, exactly our one table); else why it cannot be told as ours. Only the header is read first, so
    a damaged cache of ours is still known.

    The header is read outside sqlite: never call this while the process holds a connection to ``path``
    (closing any descriptor of a file drops every POSIX lock the process has on it, and another process
    closing its connection then takes itself for the last one and deletes the WAL still written to).
    An open cache asks :func:`foreign_tables` on its own connection instead.
    """
    with open(path, "rb") as fh:
        header = fh.read(100)
    if not header:
        return None  # an empty file: what sqlite makes of a cache whose creation never finished
    if not header.startswith(SQLITE_HEADER) or len(header) < 72:
        return "not an sqlite database, so not a cache this suite wrote"
    application_id = int.from_bytes(header[68:72], "big")
    if application_id == APPLICATION_ID:
        return None
    if application_id:
        return f"an sqlite database of another program (application_id {application_id:#x})"
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            return foreign_tables(db)
    except sqlite3.Error as exc:
        return f"an sqlite database without this suite's marker, whose tables cannot be read ({exc})"


def foreign_tables(db: sqlite3.Connection) -> str | None:
    """None when the database open in ``db`` holds exactly this suite's one table; else what it holds."""
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    columns = tuple(row[1] for row in db.execute("PRAGMA table_info(responses)"))
    if tables != {"responses"} or columns != COLUMNS:
        shown = ", ".join(sorted(tables)) or "none"
        return f"an sqlite database of another program (tables: {shown})"
    return None


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
