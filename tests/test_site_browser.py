"""The nightly site as a person sees it: index.html, history.html and a night's report opened in headless
Chromium from disk, a history link followed to its night. The records are one real suite run on the symbolic
backend, a stand-in, and the run's summary.json edited into a night of a model whose name is markup.

Set MATHCOMP_KEEP_SHOT to a folder to keep the screenshots (index.png, history.png) for a person to look at."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from helpers.browser import chromium, dump_dom, screenshot
from helpers.html_page import Page
from helpers.shared_runs import Nights

from mathcomp_tests.cli import main

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
INDEX_TITLE = "MathComp nightly results: 1 INCOMPLETE, 2 PASSED"
REPORT_TITLE = re.compile(r"symbolic: PASSED, \d{8}-\d{6}-symbolic-[0-9a-f]{4} \(report\.html\)")
"""A night's report, unpacked (record/packed.py): its model, where its night stands, its run id."""

pytestmark = pytest.mark.xdist_group("site_browser")
"""One worker runs this module's tests, so its module-scoped fixture (the site) is built once."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    chromium()  # skip before the run when there is no browser
    tmp = tmp_path_factory.mktemp("site-browser")
    nights: Nights = request.getfixturevalue("symbolic_nights")  # the session's symbolic runs (conftest.py)
    run = nights.base
    assert run.returncode == 0, run.output
    records = tmp / "records"
    assert main(["record", str(records), "--from", str(run.run_dir)]) == 0
    assert main(["record", str(records), "--stand-in", "--model=hf:acme/cut-short"]) == 0
    hostile = run.summary | {"run_id": "20261201-010000-hostile-0001", "model": HOSTILE}
    (records / hostile["run_id"]).mkdir()
    (records / hostile["run_id"] / "summary.json").write_text(json.dumps(hostile), encoding="utf-8")
    assert main(["site", str(records), str(tmp / "site")]) == 0
    return tmp / "site"


def test_the_index_renders_the_verdicts_in_order_and_the_markup_name_as_text(
    site: Path, tmp_path: Path
) -> None:
    dom = Page(dump_dom(site / "index.html", tmp_path / "profile"))
    assert dom.title == INDEX_TITLE, "neither the <script> nor the onerror handler in the model name ran"
    assert not [t for t, _ in dom.tags if t in ("script", "img")], "no element came out of the model's name"
    text = "".join(dom.text)
    assert HOSTILE in text, "the name is shown, as text"
    assert "3 nights of 3 models read, 0 skipped." in text
    assert dom.badges[:3] == ["INCOMPLETE", "PASSED", "PASSED"], dom.badges  # the latest night per model
    assert "INCOMPLETE (the job ended before the suite wrote summary.json" in text
    assert "PASSED: all 2 cases" in text


def test_the_report_link_of_a_night_opens_its_report(site: Path, tmp_path: Path) -> None:
    dom = Page(dump_dom(site / "index.html", tmp_path / "profile"))
    reports = sorted({link for link in dom.links if link.endswith("/report.html")})
    assert len(reports) == 1, dom.links  # the real run's night; the stand-in and the edited copy keep none
    report = Page(dump_dom(site / reports[0], tmp_path / "profile"))
    assert REPORT_TITLE.fullmatch(report.title), report.title
    assert report.links[0] == "../../index.html", "the way back to the index, first"
    verdicts = [a for _, a in report.tags if "mathcomp-verdict" in (a.get("class") or "").split()]
    assert len(verdicts) == 1 and "PASSED: all 2 cases" in "".join(report.text)


def _keep(shot: Path) -> None:
    keep = os.environ.get("MATHCOMP_KEEP_SHOT")
    if keep:  # where to leave the screenshot for a person to look at
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


@pytest.mark.parametrize(("name", "size"), [("index", "1400,900"), ("history", "1400,2400")])
def test_a_screenshot_of_each_page_renders(site: Path, tmp_path: Path, name: str, size: str) -> None:
    shot = screenshot(site / f"{name}.html", tmp_path / f"{name}.png", tmp_path / "profile", size=size)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    _keep(shot)


def test_the_history_page_leads_back_to_the_index_and_on_to_each_night(site: Path, tmp_path: Path) -> None:
    dom = Page(dump_dom(site / "history.html", tmp_path / "profile"))
    named = dom.title.removeprefix("MathComp history: ").split(", ")
    assert sorted(named) == ["hf:acme/cut-short", "symbolic"], f"its models, no script ran: {dom.title}"
    fetched = [a for t, a in dom.tags if t == "img" and not str(a.get("src")).startswith("data:")]
    assert HOSTILE in "".join(dom.text) and not fetched, "the name is text: no <img src=x> came of it"
    assert dom.links[0] == "index.html" and Page(dump_dom(site / "index.html", tmp_path / "profile")).title
    nights = sorted({link for link in dom.links if link.startswith("nights/")})
    assert len(nights) == 1 and nights[0].endswith("/report.html"), dom.links  # the real run's report
    points = [a for t, a in dom.tags if t == "a" and a.get("class") == "mathcomp-point"]
    assert points and {a["href"] for a in points} == set(nights), "its points lead to the same night"
    report = Page(dump_dom(site / nights[0], tmp_path / "profile"))
    assert REPORT_TITLE.fullmatch(report.title) and "PASSED: all 2 cases" in "".join(report.text)
