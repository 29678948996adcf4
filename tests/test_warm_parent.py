"""The warm parent the suite runs fork from (helpers/warm_parent.py): a forked run is the process a fresh
`python -m pytest` would be, in what it sees and in what it returns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import warm_runs
from helpers.suite_runner import pytest_process

PROBE = """
import os, sys, signal

def test_sees_its_own_process():
    import helper_on_path  # from PYTHONPATH, as a fresh interpreter reads it
    print("cwd", os.getcwd())
    print("value", os.environ["WARM_PROBE"])
    print("path0", sys.path[0])
    print("sigint", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    print("to stderr", file=sys.stderr)
    from hypothesis.configuration import storage_directory  # where Hypothesis keeps its files: this cwd's
    print("hypothesis", storage_directory(intent_to_write=False).path)
    assert os.environ["WARM_PROBE"] != "fail"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper_on_path.py").write_text("")
    return tmp_path


def _env(project: Path, value: str) -> dict[str, str]:
    return {**os.environ, "WARM_PROBE": value, "PYTHONPATH": str(project / "lib")}


def test_a_forked_run_has_its_own_cwd_environment_path_output_and_exit_code(project: Path) -> None:
    args = ["-p", "no:cacheprovider", "-s", "-q", "test_probe.py"]
    forked = warm_runs.run(args, project, _env(project, "one"), timeout=120)
    assert forked is not None, "the warm parent started"
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert f"cwd {project}" in forked.stdout and "value one" in forked.stdout
    assert f"path0 {project}" in forked.stdout and "sigint True" in forked.stdout
    assert "to stderr" in forked.stderr and "to stderr" not in forked.stdout
    assert "PytestAssertRewriteWarning" not in forked.stdout + forked.stderr, "no warning a fresh run lacks"
    assert f"hypothesis {project / '.hypothesis'}" in forked.stdout, "nothing preloaded kept the parent's cwd"
    again = warm_runs.run(args, project, _env(project, "fail"), timeout=120)
    assert again is not None and again.returncode == 1, "each run its own environment and exit code"
    fresh = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=project, env=_env(project, "fail"), capture_output=True,
        text=True,
    )  # fmt: skip
    assert fresh.returncode == again.returncode


def test_a_forked_runs_xdist_workers_see_its_pythonpath(project: Path) -> None:
    """xdist sends its workers the sys.path it saw when it was imported: a preloaded xdist would send the
    parent's, and a plugin or module on the run's PYTHONPATH would be missing in the workers."""
    args = ["-p", "no:cacheprovider", "-q", "-n", "1", "test_probe.py"]
    forked = warm_runs.run(args, project, _env(project, "one"), timeout=120)
    assert forked is not None, "the warm parent started"
    assert forked.returncode == 0, forked.stdout + forked.stderr


def test_a_run_past_its_time_is_killed_and_said_as_subprocess_says_it(project: Path) -> None:
    (project / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        pytest_process(["-p", "no:cacheprovider", "test_slow.py"], cwd=project, env=_env(project, "x"), timeout=3)

