"""What a response cache file is: sqlite's database with this suite's marker (its application_id) and its
one table, and how a damaged one is told from one busy just now. The cache (backends/cache/store.py), the plugin
and the cache commands (cli/cache.py) all ask here before they read, trim or remove a file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

CACHE_FILE = "responses.sqlite"
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


def is_damage(exc: sqlite3.Error) -> bool:
    """A file that is not a readable response cache, as against one busy or read-only just now."""
    name = getattr(exc, "sqlite_errorname", "")
    return name in ("SQLITE_CORRUPT", "SQLITE_NOTADB") or "no such table: responses" in str(exc)


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
