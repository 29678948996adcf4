"""The end of a finished run holds: a Ctrl-C (or SIGTERM) that lands while it writes summary.json, reports/latest, the
baseline, report.html, the end-of-run table. Whatever step it lands in, the files are the finished run's and
whole, the terminal says so in one line (no traceback), and the run exits as pytest's INTERRUPTED (2); a
second Ctrl-C likewise. The signal is sent from inside the step (helpers/interrupt_at.py), not after a sleep."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import interrupt_at, taken_path
from helpers.plugin_env import with_test_plugins
from helpers.suite_runner import pytest_process

from mathcomp_tests.baseline_file import reader

TWO_CASES = ("--model=symbolic", "--framings=neutral", "--positions=begin,end", "--limit=4", "--generated=0")
SAID = "while the run's end was written"


def _run(tmp_path: Path, points: str, sig: str, *more: str) -> tuple[int, str, Path]:
    """A two-case run that signals itself at ``points``; its exit code, output and baseline file."""
    path = tmp_path / "gate" / "baseline.txt"
    args = [
        "-p", "no:cacheprovider", "-p", "helpers.interrupt_at", f"--reports-dir={tmp_path / 'reports'}",
        "--no-cache", f"--update-baseline={path}", *TWO_CASES, *more,
    ]  # fmt: skip
    env = with_test_plugins(os.environ.copy(), {interrupt_at.POINTS: points, interrupt_at.SIGNAL: sig})
    done = pytest_process(args, env=env, timeout=300)
    return done.returncode, done.stdout + done.stderr, path


@pytest.mark.parametrize(
    ("points", "sig", "more"),
    [
        ("summary", "SIGINT", ()),
        ("latest", "SIGINT", ()),
        ("baseline", "SIGINT", ()),
        ("report", "SIGINT", ()),
        ("table", "SIGINT", ()),
        ("summary,report", "SIGINT", ()),  # a second Ctrl-C while the first is held
        ("summary,summary", "SIGINT", ()),
        ("summary", "SIGTERM", ()),  # a CI timeout
        ("summary,report", "SIGINT", ("-n", "2")),  # the controller, while it also ends its workers
    ],
)
def test_a_signal_while_the_end_is_written_leaves_the_finished_runs_files_and_one_line(
    tmp_path: Path, points: str, sig: str, more: tuple[str, ...]
) -> None:
    code, output, path = _run(tmp_path, points, sig, *more)
    assert code == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output[-3000:]
    said = [line for line in output.splitlines() if SAID in line]
    assert len(said) == 1, output[-3000:]
    assert ("Ctrl-C" if sig == "SIGINT" else sig) in said[0], said
    run_dir = (tmp_path / "reports" / "latest").resolve()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["status"], summary["cases_reported"]) == ("complete", 2), summary["incomplete_reasons"]
    assert not list(run_dir.glob("*.tmp")), "a half-written file was left"
    assert "MathComp framing-bias report" in (run_dir / "report.html").read_text()
    assert sorted(reader.load(path).cases) == ["neutral-begin-std-one-word", "neutral-end-std-one-word"]
    assert "MathComp directional error" in output, "the end-of-run table was printed"


def test_a_baseline_that_cannot_be_replaced_is_one_line_and_the_rest_is_written(tmp_path: Path) -> None:
    path = tmp_path / "gate" / "baseline.txt"
    args = [
        "-p", "no:cacheprovider", "-p", "helpers.taken_path", f"--reports-dir={tmp_path / 'reports'}", "--no-cache",
        f"--update-baseline={path}", *TWO_CASES,
    ]  # fmt: skip
    env = with_test_plugins(os.environ.copy(), {taken_path.TAKE: str(path)})
    done = pytest_process(args, env=env, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    said = [line for line in output.splitlines() if line.startswith("baseline not written: ")]
    assert said == [f"baseline not written: {path} cannot be replaced (Is a directory); {path} unchanged"], said
    assert "MathComp directional error" in output, "the end-of-run table was printed"
    run_dir = (tmp_path / "reports" / "latest").resolve()
    assert "MathComp framing-bias report" in (run_dir / "report.html").read_text()
    assert (path / "someone-elses.txt").read_text() == "not the run's\n"
