"""The cache commands touch only what they can tell is their own response cache.

A healthy sqlite file of another program, or a text file, that happens to be named responses.sqlite was
called "damaged" by `cache stats` and deleted by `cache clear`.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

from helpers.cli_process import mathcomp_process
from helpers.suite_runner import run_suite

from mathcomp_tests.backends.cache.file import APPLICATION_ID


def cache_cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return mathcomp_process("cache", *args, f"--cache-dir={folder}", timeout=120)


def _another_programs_database(path: Path) -> None:
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)")
        db.execute("INSERT INTO orders (item) VALUES ('tea')")
    db.close()


def test_clear_leaves_another_programs_database_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    _another_programs_database(path)
    before = path.read_bytes()
    for action in ("stats", "clear"):
        result = cache_cli(path.parent, action)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "damaged" not in result.stderr
        assert f"{path} is an sqlite database of another program (tables: orders); left as it is" in result.stderr
    assert path.read_bytes() == before


def test_clear_leaves_a_text_file_of_that_name(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    path.parent.mkdir()
    path.write_text("my notes, not a database\n")
    result = cache_cli(path.parent, "clear")
    assert result.returncode == 1
    assert "not an sqlite database, so not a cache this suite wrote; left as it is" in result.stderr
    assert path.read_text() == "my notes, not a database\n"


def test_a_cache_the_suite_made_is_marked_and_still_cleared_when_damaged(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=4", "--framings=neutral", "--positions=end")
    assert run.returncode == 0, run.output
    path = tmp_path / "cache" / "responses.sqlite"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    result = cache_cli(path.parent, "clear")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"removed the damaged cache {path}"
    assert not path.exists()


def test_a_cache_made_before_the_marker_is_still_read_and_marked_by_the_next_run(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=4", "--framings=neutral", "--positions=end")
    path = tmp_path / "cache" / "responses.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA application_id = 0")  # as every cache was written before the marker
    db.close()
    stats = cache_cli(path.parent, "stats")
    assert stats.returncode == 0 and "4 entries" in stats.stdout, stats.stderr
    again = run_suite(tmp_path, "--model=symbolic", "--limit=4", "--framings=neutral", "--positions=end")
    assert again.summary["prompts_sent"] == 0 and run.returncode == again.returncode == 0
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()
