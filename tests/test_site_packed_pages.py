"""A night's pages kept gzipped in its record and served by the site as pages that unpack themselves: opened
in headless Chromium from disk, the report is pytest-html's page drawn by its own script and the diff lists
the changed items under the table of cases. A record written before pages were packed (plain report.html) is
still published; a packed page that does not unpack is left out with a line naming it.

Set MATHCOMP_KEEP_SHOT to a folder to keep the screenshots (night-report.png, night-diff.png)."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import pytest
from helpers.browser import dump_dom, screenshot
from helpers.html_page import Page
from helpers.packed_pages import unpacked
from helpers.shared_runs import Nights
from helpers.suite_runner import SuiteRun
from helpers.usage import call

pytestmark = pytest.mark.xdist_group("site_packed")
"""One worker runs this module's tests, so its module-scoped fixture (the records) is built once."""


@pytest.fixture(scope="module")
def night(symbolic_nights: Nights, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SuiteRun]:
    """A records folder holding one real night, recorded with its diff against a baseline of another run (the
    session's symbolic nights, tests/conftest.py)."""
    tmp = tmp_path_factory.mktemp("packed")
    baseline, base, run = symbolic_nights.baseline, symbolic_nights.base, symbolic_nights.compared
    assert base.returncode == 0, base.output
    assert run.returncode == 0, run.output
    records = tmp / "records"
    from mathcomp_tests.cli import main

    assert main(["record", str(records), "--from", str(run.run_dir), "--baseline", str(baseline)]) == 0
    return records, run


def _shot(page: Path, name: str, tmp_path: Path) -> None:
    shot = screenshot(page, tmp_path / name, tmp_path / "profile-shot", size="1300,1500")
    keep = os.environ.get("MATHCOMP_KEEP_SHOT")
    if keep:
        shutil.copy(shot, Path(keep) / name)


def test_a_nights_pages_unpack_themselves_in_a_browser(
    night: tuple[Path, SuiteRun], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, run = night
    code, _, err = call(capsys, "site", str(records), str(tmp_path / "site"))
    assert code == 0 and err == "", err
    pages = tmp_path / "site" / "nights" / run.summary["run_id"]
    report, diff = pages / "report.html", pages / "diff.html"
    assert unpacked(report) == (run.run_dir / "report.html").read_bytes(), "the run's own report, whole"
    assert report.stat().st_size < (run.run_dir / "report.html").stat().st_size / 2, "served packed"
    drawn = dump_dom(report, tmp_path / "profile")
    assert "Unpacking" not in drawn and "could not unpack" not in drawn
    page = Page(drawn)
    assert page.title == f"symbolic: PASSED, {run.summary['run_id']} (report.html)", "the model and verdict"
    assert page.links[0] == "../../index.html", "the way back to the index, first"
    drawn_rows = re.findall(r'<td class="col-result[^"]*">Passed</td>', drawn)
    assert len(drawn_rows) == len(run.summary["cases"]), "pytest-html drew every row"
    listed = dump_dom(diff, tmp_path / "profile")
    assert Page(listed).links[0] == "../../index.html"
    assert "What changed, item by item" in listed and 'class="mathcomp-case-list"' in listed
    _shot(report, "night-report.png", tmp_path)
    _shot(diff, "night-diff.png", tmp_path)


def test_a_record_with_plain_pages_is_published_and_a_damaged_packed_page_is_left_out(
    night: tuple[Path, SuiteRun], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, run = night
    copy = Path(shutil.copytree(records, tmp_path / "records"))
    folder = copy / run.summary["run_id"]
    (folder / "report.html").write_bytes(gzip.decompress((folder / "report.html.gz").read_bytes()))
    (folder / "report.html.gz").unlink()  # as a record written before pages were packed
    (folder / "diff.html.gz").write_bytes((folder / "diff.html.gz").read_bytes()[:200])  # cut short
    code, _, err = call(capsys, "site", str(copy), str(tmp_path / "site"))
    assert code == 0 and err == (
        f"skipped {folder / 'diff.html.gz'}: the gzip stream is cut short; expected a page as `mathcomp record` "
        "keeps it; the night is published without it\n"
    ), err
    pages = tmp_path / "site" / "nights" / run.summary["run_id"]
    assert sorted(p.name for p in pages.iterdir()) == ["report.html"]
    assert unpacked(pages / "report.html") == (folder / "report.html").read_bytes()
    index = (tmp_path / "site" / "index.html").read_text()
    assert "/report.html" in index and "/diff.html" not in index, "the index links only the pages written"
