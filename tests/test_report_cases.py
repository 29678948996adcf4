"""The report's case table: every case pytest ran is a row (test_generated's too), a row's change against
the baseline means what the terminal's means (the rise that failed it), and the header tells the answers
sent now from those taken from the cache."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from helpers.report_reader import read_report
from helpers.suite_runner import SuiteRun, run_suite
from helpers.summaries import case, change, summary

from mathcomp_tests.plugin.terminal import baseline_line, write_table
from mathcomp_tests.report import html
from mathcomp_tests.report.pooled import worst_cells
from mathcomp_tests.report.standalone import rebuild
from mathcomp_tests.run.comparison import largest_change

ARGS = ("--limit=20", "--framings=neutral,direct-more,direct-less", "--positions=begin", "--generated=20")


class _Header(HTMLParser):
    """The run header's rows (``<th>key</th><td data-key=...>value</td>``) as a dict."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, str] = {}
        self._key: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._key = dict(attrs).get("data-key") if tag == "td" else None

    def handle_data(self, data: str) -> None:
        if self._key is not None:
            self.rows[self._key] = self.rows.get(self._key, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._key = None


def header(page: str) -> dict[str, str]:
    parsed = _Header()
    parsed.feed(page)
    return parsed.rows


def _table_ids(run: SuiteRun) -> list[str]:
    return [line.split()[0] for line in run.table[1:] if re.match(r"^(generated:)?[a-z]+-[a-z-]+ ", line)]


def test_every_case_pytest_ran_is_a_row_and_a_failing_row_shows_what_failed_it(tmp_path: Path) -> None:
    """The demo model against the always-right reference, generated cases included: all six fail on a
    rise. The report (pytest-html's page and the rebuilt one) has a row for each, and each row's change
    is the rise that failed the case, the number the terminal shows."""
    path = tmp_path / "baseline.txt"
    base = run_suite(tmp_path, "--model=symbolic", *ARGS, f"--update-baseline={path}", generated=True)
    assert base.returncode == 0, base.output
    run = run_suite(tmp_path, *ARGS, f"--baseline={path}", generated=True)
    assert run.returncode == 1, run.output
    every = [*run.summary["cases"], *run.summary["generated_cases"]]
    ran = _table_ids(run)
    assert len(ran) == 6 and sum(i.startswith("generated:") for i in ran) == 3, run.table
    assert run.summary["cases_failed"] == 6
    pages = {
        "pytest-html": read_report(run.run_dir / "report.html").summary_rows,
        "rebuilt": _rows(rebuild(run.run_dir, print)),
    }
    for name, rows in pages.items():
        body = rows[1:]
        assert [r[0] for r in body] == ran, name
        assert sum(r[-1].startswith("FAIL") for r in body) == 6, name
        for row, summary_case in zip(body, every, strict=True):
            rises = [b for b in summary_case["breaches"] if b.startswith("DirErr(") and b.endswith(" rise")]
            shown = largest_change([summary_case])
            assert shown is not None and rises
            label = shown["label"]
            assert f"DirErr({label}) rise" in rises, "the change shown is a rise that failed the case"
            failing = [summary_case["baseline"]["changes"][r.removeprefix("DirErr(").partition(")")[0]] for r in rises]
            assert shown["difference"] == max(c["difference"] for c in failing), "the largest of them"
            points = f"{100 * shown['difference']:+.1f}"
            assert row[-2].startswith(f"DirErr({label}) {points} ") and row[-2].endswith(" rose"), (name, row)
            assert f"{points} {label}" in run.table_row(summary_case["case"])
    counted, framing_only = worst_cells(every)[1], worst_cells(run.summary["cases"])[1]
    assert counted > framing_only, "the generated cases fail too"
    said = header(html.run_header_html(run.summary))["worst cells"]
    assert said.startswith(f"{counted} failed or changed"), ("generated cases' cells are counted", said)


def _rows(page: str) -> list[list[str]]:
    parser = _ReportRows()
    parser.feed(page)
    return parser.rows


class _ReportRows(HTMLParser):
    """The rows of the ``mathcomp-summary`` table of a page given as text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._depth = 0
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div":
            self._depth += 1 if self._depth or dict(attrs).get("class") == "mathcomp-summary" else 0
        if self._depth and tag == "tr":
            self.rows.append([])
        if self._depth and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._depth:
            self._depth -= 1
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_a_cached_run_says_its_answers_and_their_tokens_came_from_the_cache(tmp_path: Path) -> None:
    args = ("--limit=20", "--framings=direct-more", "--positions=begin")
    first = run_suite(tmp_path, *args)
    assert first.returncode == 0, first.output
    fresh = header((first.run_dir / "report.html").read_text(encoding="utf-8"))
    usage = first.summary["usage"]
    assert usage["input_tokens"] > 0 and usage["cached_requests"] == 0
    assert (
        fresh["answers"] == f"{first.summary['prompts_sent']} sent to the model now, 0 taken from the cache"
    )
    assert fresh["tokens in / out"] == (
        f"sent now {usage['input_tokens']} / {usage['output_tokens']}; from the cache 0 / 0"
    )
    again = run_suite(tmp_path, *args)
    assert again.returncode == 0, again.output
    cached = header((again.run_dir / "report.html").read_text(encoding="utf-8"))
    assert again.summary["prompts_sent"] == 0
    assert cached["answers"] == "0 sent to the model now, 20 taken from the cache"
    assert cached["tokens in / out"] == (
        f"sent now 0 / 0; from the cache {usage['input_tokens']} / {usage['output_tokens']}"
    )


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(title)

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_a_row_failing_on_a_rise_shows_that_rise_not_a_larger_fall() -> None:
    """DirErr(less) rose 8.3 points (significant, over max_increase): the case fails on it; DirErr(equal)
    fell 11.7. Every place shows the rise: the report's row, the terminal's row, the run's line."""
    failing = case(
        "direct-less",
        dir_err={"less": 0.15, "equal": 0.02},
        changes={"less": change(0.083, 0.001), "equal": change(-0.117, 0.001)},
    )
    run = summary([failing])
    run["baseline"]["largest_change"] = largest_change(run["cases"])
    row = _rows(html.summary_table_html("m", run["cases"]))[1]
    assert row[-2] == "DirErr(less) +8.3 (p 0.001) rose" and row[-1] == "FAIL (rise)", row
    tr = Lines()
    write_table(tr, "m", run["cases"], "reports/x", run["baseline"])
    (terminal_row,) = [line for line in tr.lines if line.startswith("direct-less-begin-std-one-word ")]
    assert "+8.3 less" in terminal_row and "-11.7" not in terminal_row
    assert "largest change +8.3 points (direct-less-begin-std-one-word, less)" in baseline_line(
        run["baseline"]
    )
    one_rise = header(html.run_header_html(run))["baseline"]
    assert "1 case compared, 1 rise, 0 without a baseline" in one_rise, one_rise
