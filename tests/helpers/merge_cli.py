"""`mathcomp merge` run as a user runs it, in a process of its own (helpers/cli_process.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers.cli_process import mathcomp_process
from helpers.suite_runner import REPO, run_suite


def merge(
    *args: str | Path, job_summary: Path | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """`mathcomp merge ARGS` from ``cwd``, the repository root by default (in a CI step whose
    $GITHUB_STEP_SUMMARY is ``job_summary``, when given)."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | {"HF_HUB_OFFLINE": "1"}
    if job_summary is not None:
        env["GITHUB_STEP_SUMMARY"] = str(job_summary)
    return mathcomp_process("merge", *args, cwd=cwd, env=env, timeout=300)


SMALL = ("--model=symbolic", "--limit=4", "--framings=neutral", "--positions=end")
"""A selection small enough to shard in two and merge in seconds."""


def finished_shards(root: Path, *args: str, count: int = 2) -> list[Path]:
    """The run folders of ``count`` shards of the selection ``args`` (SMALL by default), each run in a
    process and a folder of its own under ``root``; every shard must have run to its end."""
    runs = [
        run_suite(root / f"shard-{i}", *(args or SMALL), f"--shard={i}/{count}") for i in range(1, count + 1)
    ]
    assert all(r.returncode == 0 for r in runs), [r.output[-1500:] for r in runs]
    return [r.run_dir for r in runs]
