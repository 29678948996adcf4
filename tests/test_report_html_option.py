"""``--html=PATH`` (pytest-html's own option) with the suite: the user's page where they asked, and the run
folder's report.html still there (reports/latest/report.html), both self-contained."""

from __future__ import annotations

from pathlib import Path

from helpers.report_reader import read_report
from helpers.suite_runner import run_suite


def test_html_elsewhere_still_leaves_the_run_folders_report_and_both_open_as_one_file(tmp_path: Path) -> None:
    mine = tmp_path / "pages" / "mine.html"
    run = run_suite(tmp_path, "--model=symbolic", "--limit=5", "--framings=neutral", "--positions=end",
                    f"--html={mine}")  # fmt: skip
    assert run.returncode == 0, run.output
    latest = tmp_path / "reports" / "latest" / "report.html"
    assert mine.is_file() and latest.is_file(), run.output
    for page in (mine, latest):
        report = read_report(page)
        assert report.scripts == ["inline"], f"{page} must be self-contained"
        assert 'href="assets/' not in page.read_text(encoding="utf-8"), page
        assert [r[0] for r in report.summary_rows[1:]] == ["neutral-end-std-one-word"], page
    assert not (mine.parent / "assets").exists()
    assert latest.read_text(encoding="utf-8") == mine.read_text(encoding="utf-8")
