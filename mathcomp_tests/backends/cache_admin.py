"""`python -m mathcomp_tests.cache stats|prune|clear`: look into the response cache and trim it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .models import UnknownModelError, resolve

CACHE_FILE = "responses.sqlite"
DAY = 86400.0


def cache_path(cache_dir: str | None) -> Path:
    """The cache file under --cache-dir, else $MATHCOMP_CACHE_DIR, else ./.mathcomp-cache."""
    folder = cache_dir or os.environ.get("MATHCOMP_CACHE_DIR") or ".mathcomp-cache"
    return Path(folder) / CACHE_FILE


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
    with sqlite3.connect(path) as db:
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
    with sqlite3.connect(path, timeout=60) as db:
        removed = db.execute(f"DELETE FROM responses{where}", params).rowcount
    with sqlite3.connect(path, timeout=60) as db:
        db.execute("VACUUM")
    return int(removed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mathcomp_tests.cache", description=__doc__)
    parser.add_argument(
        "--cache-dir", help="the cache folder (default: $MATHCOMP_CACHE_DIR, else .mathcomp-cache)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("stats", "entries per model and revision"), ("clear", "remove entries")):
        sub = commands.add_parser(name, help=text)
        sub.add_argument("--model", help="only this model (as given to --model, or as stored)")
    prune = commands.add_parser("prune", help="remove entries written more than DAYS days ago")
    prune.add_argument("--older-than", type=float, required=True, metavar="DAYS")
    prune.add_argument("--model", help="only this model (as given to --model, or as stored)")
    args = parser.parse_args(argv)
    path = cache_path(args.cache_dir)
    if not path.is_file():
        print(f"no cache at {path}", file=sys.stderr)
        return 2
    if args.command == "stats":
        print("\n".join(stats(path, args.model)))
        return 0
    if args.command == "prune" and args.older_than < 0:
        parser.error("--older-than must be at least 0")
    removed = delete(path, args.model, args.older_than if args.command == "prune" else None)
    print(f"removed {removed} entries from {path}")
    return 0
