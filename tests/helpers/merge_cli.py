"""`mathcomp merge` run as a user runs it, in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.suite_runner import REPO


def merge(*args: str | Path, job_summary: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`mathcomp merge ARGS` from the repository root (in a CI step whose $GITHUB_STEP_SUMMARY is
    ``job_summary``, when given)."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | {"HF_HUB_OFFLINE": "1"}
    if job_summary is not None:
        env["GITHUB_STEP_SUMMARY"] = str(job_summary)
    command = [sys.executable, "-m", "mathcomp_tests", "merge", *map(str, args)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
