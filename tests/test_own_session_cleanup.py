"""What a process of the project's own test session leaves behind in the temporary folder: nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.suite_runner import REPO


def test_a_process_that_loads_the_tests_conftest_removes_its_hf_home(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_clock_free_tests.py", "--collect-only", "-q"]
        + ["-p", "no:cacheprovider"],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_clock_free_tests.py::" in done.stdout  # the conftest ran: the tests were collected
    assert [p.name for p in temp.iterdir() if p.name.startswith("mathcomp-hf-home-")] == []
