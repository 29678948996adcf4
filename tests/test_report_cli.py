"""`mathcomp report` and `mathcomp history` rebuild pages from run folders
alone: no model is called, so they work on folders copied from elsewhere."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.cli_process import mathcomp_process
from helpers.shared_runs import TwoFormats
from helpers.suite_runner import SuiteRun


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return mathcomp_process(*args, timeout=300)


pytestmark = pytest.mark.xdist_group("report_cli")
"""One worker runs this module's tests, so its module-scoped fixtures (`two_runs`) are built once."""


@pytest.fixture(scope="module")
def two_runs(two_formats: TwoFormats) -> tuple[SuiteRun, SuiteRun]:
    """The session's two symbolic runs in one reports folder (tests/conftest.py), read only: a test that
    writes a page into a run folder or the reports folder copies it first."""
    first, second = two_formats.one_word, two_formats.json
    assert first.returncode == second.returncode == 0, first.output + second.output
    return first, second


def _copied_reports(run: SuiteRun, tmp_path: Path) -> Path:
    """A copy of the reports folder holding ``run`` (its run folders and the ``latest`` link as they are)."""
    return Path(shutil.copytree(run.run_dir.parent, tmp_path / "reports", symlinks=True))


def test_report_rebuilds_one_run_with_its_figures_and_numbers(
    two_runs: tuple[SuiteRun, SuiteRun], tmp_path: Path
) -> None:
    first, _ = two_runs
    run_dir = _copied_reports(first, tmp_path) / first.run_dir.name
    proc = _cli("report", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    page = (run_dir / "report-rebuilt.html").read_text()
    assert page.count('class="mathcomp-figure"') == 2 and "data:image" not in page  # charts are HTML
    assert f'data-key="dataset sha256">{first.summary["dataset"]["sha256"]}<' in page
    assert page.count("<h3>") == 4 and "Confusion for neutral-begin-std-one-word" in page
    assert "<script" not in page, "a plain page: nothing runs"


def test_report_combines_runs_side_by_side(two_runs: tuple[SuiteRun, SuiteRun], tmp_path: Path) -> None:
    first, second = two_runs
    out = tmp_path / "both.html"
    proc = _cli("report", str(first.run_dir), str(second.run_dir), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    page = out.read_text()
    assert 'aria-label="DirErr heat-map per run, format one-word"' in page
    assert 'aria-label="DirErr heat-map per run, format json"' in page
    assert (
        f"symbolic ({first.summary['run_id']})" in page and f"symbolic ({second.summary['run_id']})" in page
    )


def test_history_plots_every_run_and_prints_the_numbers(
    two_runs: tuple[SuiteRun, SuiteRun], tmp_path: Path
) -> None:
    first, second = two_runs
    reports = _copied_reports(first, tmp_path)
    proc = _cli("history", str(reports))
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("2", "run "))]
    assert lines[0].split()[:2] == ["run", "DirErr(less)"]
    # in run-id order: the start time first, so two runs started in one second are ordered by their ids' tails
    assert [line.split()[0] for line in lines[1:]] == sorted([first.summary["run_id"], second.summary["run_id"]])
    assert all("100.0%" in line for line in lines[1:]), "the symbolic reference is always right"
    page = (reports / "history.html").read_text()
    # one-word and json are two selections: each has an axis of its own, in the one group of the model
    assert page.count('alt="history of symbolic [') == 2 and "2 selections: each has an axis of its own" in page


def test_a_folder_that_is_not_a_run_is_a_clear_error(tmp_path: Path) -> None:
    proc = _cli("report", str(tmp_path))
    assert proc.returncode == 2 and f"{tmp_path}: not a finished run folder (no summary.json)" in proc.stderr
    proc = _cli("history", str(tmp_path))
    assert proc.returncode == 2 and "no finished runs" in proc.stderr


def test_the_terminal_header_says_how_many_scenarios_a_limited_run_asks(
    two_runs: tuple[SuiteRun, SuiteRun],
) -> None:
    first, _ = two_runs
    assert "--limit=12: 12 of 300 scenarios, drawn in proportion to category x label" in first.output
    assert first.summary["scenarios"] == 12
