"""`python -m mathcomp_tests cache`: what is stored, per model and revision, and how to trim it."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path

from helpers.cli_process import mathcomp_process
from helpers.suite_runner import run_suite


def cache_cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return mathcomp_process("cache", f"--cache-dir={cache}", *args, timeout=120)


def test_stats_prune_and_clear_work_on_a_real_runs_cache(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--model=symbolic", "--limit=4", "--framings=neutral,direct-less", "--positions=end"
    )
    assert run.returncode == 0, run.output
    cache = tmp_path / "cache"
    stats = cache_cli(cache, "stats")
    assert stats.returncode == 0, stats.stderr
    assert "8 entries" in stats.stdout and "symbolic  revision 1: 8 entries, written" in stats.stdout

    db_path = cache / "responses.sqlite"
    with sqlite3.connect(db_path) as db:  # age four entries by ten days
        keys = [k for (k,) in db.execute("SELECT key FROM responses ORDER BY key LIMIT 4")]
        db.executemany(
            "UPDATE responses SET created = ? WHERE key = ?", [(time.time() - 10 * 86400, k) for k in keys]
        )
    pruned = cache_cli(cache, "prune", "--older-than", "7")
    assert pruned.stdout.strip() == f"removed 4 entries from {db_path}"
    assert cache_cli(cache, "clear", "--model", "openai/other").stdout.startswith("removed 0 entries")
    assert cache_cli(cache, "clear", "--model", "symbolic").stdout.startswith("removed 4 entries")
    assert "0 entries" in cache_cli(cache, "stats").stdout
    rerun = run_suite(
        tmp_path, "--model=symbolic", "--limit=4", "--framings=neutral,direct-less", "--positions=end"
    )
    assert rerun.summary["prompts_sent"] == 8


def test_a_missing_cache_is_said_plainly(tmp_path: Path) -> None:
    result = cache_cli(tmp_path / "none", "stats")
    assert result.returncode == 2 and "no cache at" in result.stderr
