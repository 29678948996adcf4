"""The per-case progress bar: on a real pseudo-terminal it shows done / total, rate and time left; under
-q, in CI or without a terminal it prints nothing."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers import warm_runs
from helpers.suite_runner import REPO, pytest_process

# The demo model with no cache: loading it and answering 10 prompts outlasts the bar's 1 s delay.
ARGS = ("--framings=neutral", "--positions=begin", "--limit=10", "--no-cache", "-p", "no:cacheprovider")
BAR = "neutral-begin-std-one-word: 100%"
ANY_BAR = re.compile(r"\d+/10 \[")


def suite_command(tmp_path: Path, *extra: str) -> list[str]:
    """One case of the demo model, held to no ceiling: these tests look at the bar, not the model."""
    loose = tmp_path / "loose.toml"
    loose.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    where = (f"--reports-dir={tmp_path / 'reports'}", f"--thresholds={loose}", "-k", "test_framing")
    return [sys.executable, "-m", "pytest", *ARGS, *where, *extra]


def terminal_env(**extra: str) -> dict[str, str]:
    """A terminal, and a bar from the first prompt on (a fast case would otherwise finish before the delay)."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**env, "TERM": "xterm", "COLUMNS": "120", "MATHCOMP_PROGRESS_DELAY": "0", **extra}


def on_a_terminal(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``command`` with a pseudo-terminal as stdin, stdout and stderr; its exit code and output. The
    run is forked from the warm parent where one is free (helpers/warm_runs.py), else started afresh."""
    leader, follower = pty.openpty()
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(leader, chunks))
    reader.start()  # the terminal is read while the run writes: a full terminal would stall it
    try:
        forked = warm_runs.run(command[3:], REPO, env, timeout=300, terminal=os.ttyname(follower))
        if forked is not None:
            code = forked.returncode
        else:
            proc = subprocess.Popen(command, cwd=REPO, env=env, stdin=follower, stdout=follower, stderr=follower)
            code = proc.wait(timeout=300)
    finally:
        os.close(follower)  # the last writer gone: the reader drains the terminal and stops
        reader.join(timeout=60)  # hang guard
        os.close(leader)
    return code, b"".join(chunks).decode(errors="replace")


def _read_all(leader: int, chunks: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer closed the terminal
            return
        if not chunk:
            return
        chunks.append(chunk)


@pytest.mark.slow
def test_a_terminal_shows_done_total_rate_and_time_left(tmp_path: Path) -> None:
    code, output = on_a_terminal(suite_command(tmp_path), terminal_env())
    assert code == 0, output
    final = next(line for line in output.replace("\r", "\n").splitlines() if BAR in line)
    # done/total [elapsed<left, rate]: tqdm writes a slow rate as seconds per prompt
    assert re.search(r"10/10 \[\d\d:\d\d<\d\d:\d\d, +[\d.]+(prompt/s|s/prompt)\]", final), final


@pytest.mark.slow
def test_quiet_runs_show_no_bar_even_on_a_terminal(tmp_path: Path) -> None:
    code, output = on_a_terminal(suite_command(tmp_path, "-q"), terminal_env())
    assert code == 0, output
    assert "1 passed" in output and not ANY_BAR.search(output)


@pytest.mark.slow
def test_ci_shows_no_bar_even_on_a_terminal(tmp_path: Path) -> None:
    code, output = on_a_terminal(suite_command(tmp_path), terminal_env(CI="true"))
    assert code == 0, output
    assert "1 passed" in output and not ANY_BAR.search(output)


@pytest.mark.slow
def test_a_pipe_gets_no_bar(tmp_path: Path) -> None:
    proc = pytest_process(suite_command(tmp_path)[3:], env=terminal_env(), timeout=300, pipes=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout and not ANY_BAR.search(proc.stdout + proc.stderr)
