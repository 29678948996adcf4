"""The night records tests/test_keep.py and tests/test_keep_remotes.py keep on a bare repository: one real
suite run's summary.json (`record`, a module fixture) copied as nights, and git read back from the remote."""

from __future__ import annotations

import copy
import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helpers.suite_runner import run_suite

ARGS = ("--model=symbolic", "--limit=10", "--framings=neutral,direct-more", "--positions=begin")
BRANCH = "mathcomp-history"


@pytest.fixture(scope="module", name="record")
def record_fixture(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The summary.json of one real suite run (two cases), as a night's record."""
    run = run_suite(tmp_path_factory.mktemp("suite"), *ARGS)
    assert run.returncode in (0, 1), run.output
    return run.summary


def night(record: dict[str, Any], days_ago: float, model: str = "symbolic", **fields: Any) -> dict[str, Any]:
    """``record`` as a night ``days_ago`` days before now (its run id says when), ``fields`` replaced."""
    when = dt.datetime.now() - dt.timedelta(days=days_ago)
    made = copy.deepcopy(record)
    made["run_id"] = f"{when:%Y%m%d-%H%M%S}-{model}-{abs(hash((days_ago, model))) % 65536:04x}"
    return made | {"model": model, **fields}


def write(folder: Path, *summaries: dict[str, Any], report: bool = False) -> list[str]:
    """Each summary as ``folder/<run-id>/summary.json`` (and a report.html beside it); their run ids."""
    for summary in summaries:
        path = folder / summary["run_id"] / "summary.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(summary))
        if report:
            (path.parent / "report.html").write_text(f"<p>{summary['run_id']}</p>")
    return [s["run_id"] for s in summaries]


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture(name="remote")
def remote_fixture(tmp_path: Path) -> Path:
    """An empty bare repository: the remote."""
    path = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", str(path))
    return path


def on_branch(remote: Path) -> list[str]:
    """The record folders the branch holds."""
    return git("--git-dir", str(remote), "ls-tree", "--name-only", BRANCH).splitlines()


def subjects(remote: Path) -> list[str]:
    return git("--git-dir", str(remote), "log", "--format=%s", BRANCH).splitlines()


def held(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir())
