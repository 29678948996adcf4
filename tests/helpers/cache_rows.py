"""How many answers the suite's response cache holds, read from outside while a run writes to it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path


def cached_rows(path: Path) -> int:
    """Rows in the suite's sqlite cache at ``path`` (0 before the file or its table exists)."""
    if not path.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=5)) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
