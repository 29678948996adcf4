"""`python -m mathcomp_tests ARGS` in a process of its own, as a user runs the command: forked from this
worker's warm parent (helpers/warm_runs.py) where one is free, else a fresh interpreter. The tests that are
about `python -m` itself (its usage line, its entry module) start a fresh interpreter on their own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import warm_runs
from helpers.suite_runner import REPO


def mathcomp_process(
    *args: str | Path, cwd: Path = REPO, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m mathcomp_tests ARGS` from ``cwd`` with ``env`` (this process's environment): its exit code,
    stdout and stderr."""
    return warm_runs.process("mathcomp_tests", [str(a) for a in args], cwd, env, timeout)
