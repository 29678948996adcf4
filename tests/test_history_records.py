"""`mathcomp history` over records a hostile user (or a broken copy) wrote: valid JSON of the wrong types is
one line naming the file and the field and skipped, counted on the page; NaN is shown as missing; a year of
nights draws a plot a browser shows readably. The records are the suite's own summary.json (one real run),
copied as nights and edited where a test needs a bad one."""

from __future__ import annotations

import base64
import copy
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import screenshot
from helpers.shared_runs import Nights
from PIL import Image

from mathcomp_tests.cli import main


@pytest.fixture(scope="module")
def record(symbolic_nights: Nights) -> Iterator[dict[str, Any]]:
    """The summary.json of one real suite run (two cases), as a night's record: the session's symbolic run
    (tests/conftest.py); each test edits a copy."""
    run = symbolic_nights.base
    assert run.returncode in (0, 1), run.output
    yield run.summary


def _night(record: dict[str, Any], day: int, **fields: Any) -> dict[str, Any]:
    """``record`` as the night ``day`` days after 2026-01-01 (its run id says when), ``fields`` replaced."""
    month, date = divmod(day, 28)
    made = copy.deepcopy(record)
    made["run_id"] = f"2026{month + 1:02d}{date + 1:02d}-031700-symbolic-{day:04x}"
    return made | fields


def _write(reports: Path, night: dict[str, Any]) -> Path:
    path = reports / night["run_id"] / "summary.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(night))
    return path


def test_records_of_the_wrong_types_are_skipped_one_line_each_and_counted_on_the_page(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    first = _write(reports, _night(record, 0))
    odd_cases = _write(reports, _night(record, 1, cases=[1, "x", None]))
    night = _night(record, 2)
    night["cases"][1]["scores"]["dir_err"] = None
    no_dir_err = _write(reports, night)
    text_count = _write(reports, _night(record, 3, cases_run="28"))
    bad_change = _write(reports, _night(record, 4, baseline="hf:base"))
    last = _write(reports, _night(record, 5))
    assert main(["history", str(reports)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"skipped {odd_cases}: cases[0]: expected a case (a JSON object), got 1",
        f"skipped {no_dir_err}: cases[1].scores.dir_err: expected a JSON object (DirErr per label), got null",
        f'skipped {text_count}: cases_run: expected a whole number at least 0, got "28"',
        f'skipped {bad_change}: baseline: expected a JSON object or null, got "hf:base"',
    ]
    assert "Traceback" not in captured.out + captured.err
    drawn = [line.split()[0] for line in captured.out.splitlines() if line.startswith("2026")]
    assert drawn == [first.parent.name, last.parent.name]
    page = (reports / "history.html").read_text()
    assert "4 records skipped (not the summary.json a suite run writes):" in page
    assert page.count("<li>") == 4 and "cases_run: expected a whole number at least 0, got &quot;28&quot;" in page


def test_nan_in_a_record_is_shown_as_missing_not_as_nan_percent(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON as Python writes it may hold NaN and Infinity: a value that is no number is a missing one."""
    reports = tmp_path / "reports"
    night = _night(record, 0)
    for case in night["cases"]:
        case["scores"]["dir_err"]["less"] = float("nan")
        case["scores"]["accuracy"] = float("inf")
    _write(reports, night)
    _write(reports, _night(record, 1))
    assert main(["history", str(reports)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith(night["run_id"])]
    assert "nan" not in line.lower() and "inf" not in line.lower()
    assert line.split()[1] == "n/a" and line.split()[4] == "n/a", line
    page = (reports / "history.html").read_text()
    assert not re.search(r"nan%|inf%", page, re.IGNORECASE)


def _png_sizes(page: str) -> list[tuple[int, int]]:
    found = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    return [Image.open(io.BytesIO(base64.b64decode(data))).size for data in found]


def test_a_year_of_nights_draws_a_plot_a_browser_shows_readably(
    tmp_path: Path, record: dict[str, Any]
) -> None:
    """320 nights drew a 46,101 px wide PNG, which a page fits to its width as a grey strip 24 px tall: the
    plot shows the latest 14 runs (history.WINDOW) (a picture of bounded size), the table every run."""
    reports = tmp_path / "reports"
    for day in range(320):
        night = _night(record, day)
        for case in night["cases"]:
            case["scores"]["dir_err"]["less"] = 0.1 + 0.2 * (day % 7) / 7
        _write(reports, night)
    assert main(["history", str(reports)]) == 0
    page_path = reports / "history.html"
    page = page_path.read_text()
    ((width, height),) = _png_sizes(page)
    assert width <= 2600 and height >= 700, (width, height)
    assert "The plot shows the latest 14 of 320 runs (20261127-031700-symbolic-0132 on)" in page
    assert page.count("<tr><td>2026") == 320, "the table keeps every run"
    shot = Image.open(screenshot(page_path, tmp_path / "shot.png", tmp_path / "profile", "1300,1400"))
    top, bottom, pixels = _blue(shot.convert("RGB"))
    assert bottom - top >= 300 and pixels >= 1000, (
        f"the mean lines span {bottom - top} px of the screen's height in {pixels} pixels: not a readable plot"
    )


def _blue(shot: Image.Image) -> tuple[int, int, int]:
    """The first and last row of the screenshot holding the mean line's blue (#1f4e9a, give or take the
    scaling's blending), and how many pixels do."""
    data, blue = shot.tobytes(), (0x1F, 0x4E, 0x9A)
    found = [
        divmod(i // 3, shot.width)
        for i in range(0, len(data), 3)
        if all(abs(data[i + k] - blue[k]) <= 24 for k in range(3))
    ]
    rows = [y for y, _ in found]
    return (min(rows), max(rows), len(found)) if found else (0, 0, 0)
