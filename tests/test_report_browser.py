"""The report as a person sees it: report.html opened in headless Chromium after a real run against a
real OpenAI-compatible server on 127.0.0.1 whose model answers with markup. pytest-html builds its page
with JavaScript from data embedded in the file, so only the rendered DOM tells what a reader gets."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from helpers.browser import chromium, dump_dom, screenshot
from helpers.fault_server import OK, Fault, FaultServer
from helpers.suite_runner import SuiteRun, run_suite

HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
TITLE = "MathComp framing-bias report"
PROBE = """
<script>
window.addEventListener('load', () => {
  const figures = [...document.querySelectorAll('.mathcomp-figure')];
  document.documentElement.setAttribute('data-probe', JSON.stringify({
    title: document.title,
    figures: figures.map(f => ({
      label: f.getAttribute('aria-label'),
      width: f.getBoundingClientRect().width,
      height: f.getBoundingClientRect().height,
      cells: f.querySelectorAll('td').length,
      coloured: [...f.querySelectorAll('td.cell')]
        .filter(c => getComputedStyle(c).backgroundColor !== 'rgba(0, 0, 0, 0)').length,
    })),
  }));
});
</script>
"""
"""Added to a copy of the page: after load, records how each chart was laid out and the title."""


def hostile_every_third(index: int, attempt: int) -> Fault:
    return Fault(text=HOSTILE) if index % 3 == 0 else OK


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[list[str]] = []
        self.header: dict[str, str] = {}
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._key: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag == "tr":
            self._row = []
        if tag in ("td", "th"):
            self._cell = []
            self._key = attributes.get("data-key")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell).strip()
            if self._row is not None:
                self._row.append(text)
            if self._key:
                self.header[self._key] = text
            self._cell, self._key = None, None
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


pytestmark = pytest.mark.xdist_group("report_browser")
"""One worker runs this module's tests, so its module-scoped fixtures (`hostile_run`) are built once."""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    chromium()  # skip before the run when there is no browser
    tmp = tmp_path_factory.mktemp("browser")
    with FaultServer(schedule=hostile_every_third).running() as server:
        run = run_suite(
            tmp,
            "--model=openai/markup-server",
            f"--api-base={server.url}",
            "--limit=12",
            "--framings=neutral,direct-more,indirect-less",
            "--formats=one-word",
        )
    assert run.returncode == 1, run.output  # a third of the answers are unreadable: invalid_rate fails
    return run


@pytest.fixture(scope="module")
def rendered(hostile_run: SuiteRun, tmp_path_factory: pytest.TempPathFactory) -> tuple[_Dom, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("dom")
    page = tmp / "report.html"
    source = (hostile_run.run_dir / "report.html").read_text(encoding="utf-8")
    page.write_text(source.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _Dom()
    html = dump_dom(page, tmp / "profile")
    dom.feed(html)
    probe = next(a.get("data-probe") for t, a in dom.tags if t == "html")
    assert probe, "the probe did not run: the page never finished loading"
    return dom, json.loads(probe)


def test_every_chart_is_present_and_laid_out(
    hostile_run: SuiteRun, rendered: tuple[_Dom, dict[str, Any]]
) -> None:
    _, probe = rendered
    labels = [f["label"] for f in probe["figures"]]
    assert labels == ["DirErr heat-map, format one-word", "DirErr by category"], labels
    for figure in probe["figures"]:  # the category chart has one row here (12 scenarios, one category)
        assert figure["width"] > 300 and figure["height"] > 80, figure
    heatmap = probe["figures"][0]  # 3 directions x 2 positions x 3 framings, every cell coloured
    assert heatmap["cells"] == heatmap["coloured"] == 18, heatmap


def test_a_fails_frame_shows_on_the_darkest_cell(tmp_path: Path) -> None:
    """At 100% a cell is the darkest red: the frame's white inner line is what tells a failing one apart."""
    import io

    import matplotlib.image
    import numpy as np

    from mathcomp_tests.report import charts

    def white_pixels(fails: bool) -> int:
        cell = charts._cell(1.0, "≤20", "a 100% cell", diverging=False, marks="fail" if fails else "")
        page = tmp_path / f"cell-{fails}.html"
        body = f'<div class="mathcomp-chart"><table><tr>{cell}{cell}</tr></table></div>'
        page.write_text(f"<html><body style='margin:0'>{charts.STYLE}{body}</body></html>", encoding="utf-8")
        shot = screenshot(page, tmp_path / f"cell-{fails}.png", tmp_path / "profile", size="400,200")
        image = matplotlib.image.imread(io.BytesIO(shot.read_bytes()), format="png")
        dark_red = (image[..., 0] > 0.3) & (image[..., 1] < 0.1)
        rows, columns = np.flatnonzero(dark_red.any(axis=1)), np.flatnonzero(dark_red.any(axis=0))
        inside = image[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1]  # the two cells
        return int((inside[..., :3] > 0.92).all(axis=-1).sum())

    framed, plain = white_pixels(True), white_pixels(False)
    assert framed > 2 * plain and framed > plain + 100, (framed, plain)


def test_numbers_on_the_page_equal_summary_json(
    hostile_run: SuiteRun, rendered: tuple[_Dom, dict[str, Any]]
) -> None:
    dom, _ = rendered
    summary = hostile_run.summary
    failed = summary["cases_failed"]
    assert dom.header["cases"] == f"{summary['cases_run'] - failed} passed, {failed} failed, 0 errored"
    assert dom.header["dataset sha256"] == summary["dataset"]["sha256"]
    assert dom.header["model"].startswith("openai/markup-server")
    rows = {r[0]: r for r in dom.rows if r and r[0] in {c["case"] for c in summary["cases"]} and len(r) >= 7}
    assert len(rows) == summary["cases_run"] == 6
    for case in summary["cases"]:
        row = rows[case["case"]]
        for i, y in enumerate(("less", "more", "equal"), start=1):
            assert float(row[i].split("%")[0]) == pytest.approx(100 * case["scores"]["dir_err"][y], abs=0.05)
        assert float(row[5].rstrip("%")) == pytest.approx(100 * case["scores"]["invalid_rate"], abs=0.05)
        assert row[-1] == ("pass" if case["passed"] else "FAIL")
    # pytest-html's own table, built by its script: one row per case, each failing case marked failed.
    results = [
        a
        for t, a in dom.tags
        if t == "tbody" and a.get("id") and "results-table-row" in (a.get("class") or "")
    ]
    assert len(results) == 6
    assert sum("failed" in (a.get("class") or "") for a in results) == failed


def test_model_markup_is_shown_as_text_and_never_run(rendered: tuple[_Dom, dict[str, Any]]) -> None:
    dom, probe = rendered
    assert probe["title"] == TITLE  # neither the <script> nor the onerror handler ran
    assert not [a for t, a in dom.tags if t == "img" and a.get("src") == "x"]
    # Only pytest-html's own script and the probe: no element came out of a model's answer.
    assert len([t for t, _ in dom.tags if t == "script"]) == 2
    assert HOSTILE in "".join(dom.text), "the raw answer is shown, as text"


def test_a_screenshot_of_the_report_renders(hostile_run: SuiteRun, tmp_path: Path) -> None:
    shot = screenshot(hostile_run.run_dir / "report.html", tmp_path / "report.png", tmp_path / "profile")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    keep = os.environ.get("MATHCOMP_KEEP_SHOT")
    if keep:  # where to leave the screenshot for a person to look at
        shutil.copy(shot, keep)


GATE_PROBE = """
<script>
window.addEventListener('load', () => {
  const top = (selector) => {
    const element = document.querySelector(selector);
    return element ? element.getBoundingClientRect().top + window.scrollY : null;
  };
  const verdict = document.querySelector('.mathcomp-verdict');
  document.documentElement.setAttribute('data-probe', JSON.stringify({
    title: document.title,
    verdict: top('.mathcomp-verdict'),
    figures: top('.mathcomp-figures'),
    environment: top('#environment'),
    results: top('#results-table'),
    first: document.querySelector('.additional-summary.prefix > div').className,
    text: verdict ? verdict.innerText : null,
  }));
});
</script>
"""
"""Where the verdict, the figures, pytest-html's Environment and results tables sit on the rendered page."""


@pytest.fixture(scope="module")
def gate_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteRun, Path]:
    """A base that answers `equal`, written as a baseline file whose model line is markup, then a
    candidate that answers `more` (and markup every third time) compared with it."""
    chromium()
    tmp = tmp_path_factory.mktemp("gate")
    baseline = tmp / "baseline.txt"
    args = ("--model=openai/markup-server", "--limit=30", "--framings=neutral", "--positions=end")
    with FaultServer(answer="equal").running() as server:
        base = run_suite(tmp, *args, f"--api-base={server.url}", f"--update-baseline={baseline}", cache=False)
        assert baseline.exists(), base.output  # it fails its own ceilings (DirErr(equal) 100%): no matter
        text = baseline.read_text(encoding="utf-8")
        baseline.write_text(
            text.replace("model: openai/markup-server", f"model: {HOSTILE}"), encoding="utf-8"
        )
        server.answer, server.schedule = "more", hostile_every_third
        run = run_suite(tmp, *args, f"--api-base={server.url}", f"--baseline={baseline}", cache=False)
    assert run.returncode == 1, run.output
    return run, tmp


def test_the_verdict_with_a_rise_opens_the_page_as_text(gate_run: tuple[SuiteRun, Path]) -> None:
    run, tmp = gate_run
    page = tmp / "gate.html"
    source = (run.run_dir / "report.html").read_text(encoding="utf-8")
    page.write_text(source.replace("</body>", GATE_PROBE + "</body>"), encoding="utf-8")
    dom = _Dom()
    dom.feed(dump_dom(page, tmp / "profile"))
    probe = json.loads(next(a.get("data-probe") for t, a in dom.tags if t == "html") or "{}")
    assert probe["title"] == TITLE, "the markup in the baseline's model line never ran"
    assert probe["first"] == "mathcomp-verdict failed", "the summary opens with the verdict"
    assert probe["verdict"] < 200 < probe["figures"], probe
    assert probe["verdict"] < probe["environment"] < probe["results"], "pytest-html's tables come after"
    lines = probe["text"].splitlines()
    assert lines[0] == "FAILED: 1 of 1 cases (1 new, 0 known); 1 could not see a rise under 15 points"  # 30 items
    change = run.case("neutral-end-std-one-word")["baseline"]["changes"]["more"]
    assert change["breach"] and change["baseline"] == 0.0
    row = next(line for line in lines if line.startswith("neutral-end-std-one-word\tDirErr(more)"))
    assert row.split("\t")[2:5] == [
        "0.0%",
        f"{100 * change['candidate']:.1f}%",
        f"+{100 * change['difference']:.1f}",
    ]
    assert f"Compared with {HOSTILE} (mcnemar test" in probe["text"], "the markup shown as text"
    assert len([t for t, _ in dom.tags if t == "script"]) == 2  # pytest-html's and the probe


CHANGES_PROBE = """
<script>
window.addEventListener('load', () => {
  const rows = () => [...document.querySelectorAll('.mathcomp-changes tr[data-scenario]')];
  const shown = () => rows().filter(r => r.getBoundingClientRect().height > 0).length;
  document.documentElement.setAttribute('data-probe', JSON.stringify({
    title: document.title,
    heading: document.querySelector('.mathcomp-changes h2').textContent,
    rows: rows().length,
    changed: document.querySelectorAll('.mathcomp-changes tr.mathcomp-changed').length,
    drawn: shown(),
    boxes: document.querySelectorAll('.mathcomp-changed-only').length,
    counts: [...document.querySelectorAll('.mathcomp-case-list td:nth-child(3)')].map(td => td.textContent),
    text: document.querySelector('.mathcomp-changes').innerText,
  }));
});
</script>
"""
"""Counts the item rows the section lists and draws (the changed ones alone: no filter to tick), and the
rows of its table of cases."""


def test_what_changed_item_by_item_renders_the_changed_items_and_runs_no_answer(
    hostile_run: SuiteRun, tmp_path: Path
) -> None:
    """The markup run again against a baseline file written from its first run, every fourth answer of its
    neutral cases altered and its model line markup: those items changed, the rest did not."""
    from mathcomp_tests.baseline_file import reader, writer

    found = reader.from_run_dir(hostile_run.run_dir)
    swap = {"less": "more", "more": "equal", "equal": "less", "invalid": "less"}
    for case, outcomes in found.cases.items():
        if case.startswith("neutral-"):
            for s in found.scenarios[::4]:
                outcomes[s] = swap[outcomes[s]]
    baseline = writer.write(replace(found, model=HOSTILE), tmp_path / "baseline.txt")
    args = ("--model=openai/markup-server", "--limit=12", "--framings=neutral,direct-more,indirect-less")
    with FaultServer(schedule=hostile_every_third).running() as server:
        run = run_suite(
            tmp_path, *args, "--formats=one-word", f"--api-base={server.url}", f"--baseline={baseline}"
        )
    base = reader.load(baseline).cases
    changed = [r for r in run.records if reader.outcome(r) != base[r["case"]][r["scenario"]]]
    assert 0 < len(changed) < len(run.records) == 72, run.output
    page = tmp_path / "changes.html"
    source = (run.run_dir / "report.html").read_text(encoding="utf-8")
    page.write_text(source.replace("</body>", CHANGES_PROBE + "</body>"), encoding="utf-8")
    dom = _Dom()
    dom.feed(dump_dom(page, tmp_path / "profile"))
    probe = json.loads(next(a.get("data-probe") for t, a in dom.tags if t == "html") or "{}")
    assert probe["title"] == TITLE, "no model answer and no baseline model line ran"
    assert len([t for t, _ in dom.tags if t == "script"]) == 2  # pytest-html's and the probe
    assert not [a for t, a in dom.tags if t == "img" and a.get("src") == "x"]
    assert probe["heading"] == "What changed, item by item"
    assert probe["rows"] == probe["changed"] == probe["drawn"] == len(changed), "the changed items, all drawn"
    counts = [tuple(map(int, c.split(" of "))) for c in probe["counts"]]
    assert probe["boxes"] == 0 and len(counts) == 6, "no filter; a table of the six cases"
    assert sum(k for k, _ in counts) == len(changed) and sum(n for _, n in counts) == 72, "every item counted"
    assert f"Against the baseline {baseline} ({HOSTILE})" in probe["text"], "markup shown as text"
    assert HOSTILE in probe["text"] and "keeps answers as letters" in probe["text"]
    shot = screenshot(
        run.run_dir / "report.html", tmp_path / "changes.png", tmp_path / "profile", size="1300,4000"
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("MATHCOMP_KEEP_CHANGES_SHOT")
    if keep:  # where to leave the screenshot for a person to look at
        shutil.copy(shot, keep)
