"""The report opens with its verdict: what failed and why, each rise with its change, interval and p;
figures come before the long tables; the worst cells are the ones that failed or changed."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from helpers.summaries import case, change, summary

from mathcomp_tests.report import html, page, pooled
from mathcomp_tests.report.headline import verdict_html
from mathcomp_tests.verdict.of_run import verdict

HOSTILE = "<script>alert(1)</script>"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.chunks: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        if self.tags[-1:] != ["style"]:
            self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.chunks).split())


def _read(fragment: str) -> _Text:
    parsed = _Text()
    parsed.feed(fragment)
    return parsed


def _gate_run() -> dict:
    """A fine-tune against its base: one case over a ceiling, two rises (one also over its ceiling), one
    significant fall, and a case that passes at 100% (the ceiling allows it) and did not change."""
    rose = case(
        "neutral",
        dir_err={"less": 0.5},
        ceiling=0.6,
        changes={
            "less": change(0.33, 0.0004, baseline=0.17, low=0.2, high=0.45, rose=list("1234567"), fell=1)
        },
    )
    both = case(
        "direct-less",
        "end",
        dir_err={"less": 0.9},
        ceiling=0.35,
        changes={
            "less": change(0.12, 0.003, baseline=0.78, low=0.04, high=0.2, rose=["9"]),
            "more": change(-0.08, 0.001, baseline=0.1),
        },
    )
    ceiling_only = case("direct-less", "begin", dir_err={"less": 0.4}, ceiling=0.35)
    saturated = case("direct-more", dir_err={"more": 1.0}, ceiling=1.0, changes={"more": change(0.0, 1.0)})
    return summary([rose, both, ceiling_only, saturated])


def test_the_verdict_names_each_rise_with_its_change_interval_and_p_and_each_ceiling() -> None:
    got = _read(verdict_html(_gate_run()))
    text = got.text
    assert text.startswith(
        "FAILED: 3 of 4 cases 2 over a ceiling; 2 with a significant rise over the baseline."
    )
    assert (
        "Compared with hf:fixtures/models/mathcomp-tiny (mcnemar test, alpha 0.05): 3 cases compared." in text
    )
    rises = text.index("What got worse: rises over the baseline")
    assert rises < text.index("Over a ceiling"), "rises first: they are what the gate is about"
    # Largest rise first, each with baseline, now, change, interval, p, the max increase and its items.
    assert (
        "neutral-begin-std-one-word DirErr(less) 17.0% 50.0% +33.0 +20.0 to +45.0 0.0004 5.0 "
        "7 newly less, 1 no longer: scenarios 1, 2, 3, 4, 5, 6, ... "
        "direct-less-end-std-one-word DirErr(less) 78.0% 90.0% +12.0 +4.0 to +20.0 0.003 5.0 "
        "1 newly less, 0 no longer: scenario 9" in text
    )
    assert "direct-less-end-std-one-word DirErr(less) 90.0% 35.0% the estimate" in text
    assert "direct-less-begin-std-one-word DirErr(less) 40.0% 35.0%" in text
    assert "Significant falls (improvements): direct-less-end-std-one-word DirErr(more) -8.0 points." in text
    assert "direct-more" not in text, "a case that passed and did not change is not in the verdict"


def test_a_run_that_passes_says_so_and_what_it_was_compared_with() -> None:
    text = _read(verdict_html(summary([case("neutral", changes={"less": change(0.01, 0.6)})]))).text
    assert text.startswith("PASSED: all 1 cases Every value is under its ceiling and no significant rise")
    assert 'class="mathcomp-verdict passed"' in verdict_html(summary([case("neutral")], base=None))


def test_a_rise_found_only_by_holm_at_the_end_of_the_run_is_in_the_verdict() -> None:
    quiet = case("neutral", changes={"less": change(0.04, 0.01, max_increase=0.02)})
    quiet["breaches"], quiet["passed"] = [], True  # the per-case test (at alpha/m) did not reject
    got = verdict_html(summary([quiet], holm_failures=("neutral-begin-std-one-word: DirErr(less) rise",)))
    text = _read(got).text
    assert text.startswith("FAILED: 1 of 1 cases 1 with a significant rise")
    assert "neutral-begin-std-one-word (under Holm) DirErr(less)" in text


def test_everything_in_the_verdict_is_escaped() -> None:
    run = summary([case("neutral", own=(HOSTILE,))], base=HOSTILE)
    got = verdict_html(run)
    parsed = _read(got)
    assert "script" not in parsed.tags
    assert f"The project's own checks case failure neutral-begin-std-one-word {HOSTILE}" in parsed.text
    assert f"Compared with {HOSTILE}" in parsed.text


def test_the_page_opens_with_the_verdict_and_shows_figures_before_the_long_tables() -> None:
    run = _gate_run()
    run["invariance"]["cues"] = []
    parts = page.run_sections(run, run["cases"], [], run["model"])
    assert 'class="mathcomp-verdict failed"' in parts[0]
    assert 'class="mathcomp-run"' in parts[1]
    joined = "".join(parts)
    figures = joined.index('class="mathcomp-figures"')
    assert figures < joined.index("<h2>Directional error: hf:finetune</h2>")


def test_worst_cells_count_what_failed_or_changed_not_a_passing_unchanged_100_percent() -> None:
    shown, counted = pooled.worst_cells(_gate_run()["cases"])
    assert counted == 4  # 2 cells over a ceiling (one of them also rose), 1 other rise, 1 significant fall
    assert shown[0] == (
        "direct-less-end-std-one-word DirErr(less) 90.0% over its ceiling 35.0%, "
        "+12.0 points against the baseline (p=0.003) (over its max increase)"
    ), "one entry per cell, with every reason"
    assert not any("direct-more" in s for s in shown)
    assert shown[1:] == [
        "neutral-begin-std-one-word DirErr(less) +33.0 points against the baseline (p=0.0004) (over its max increase)",
        "direct-less-begin-std-one-word DirErr(less) 40.0% over its ceiling 35.0%",
    ], "cells that fail their case, by how far they went (the fall comes after them)"
    header = _read(html.run_header_html(_gate_run())).text
    assert "worst cells 4 failed or changed: " in header
    calm = summary([case("direct-more", dir_err={"more": 1.0}, ceiling=1.0)], base=None)
    assert "worst cells none failed or changed" in _read(html.run_header_html(calm)).text


def test_the_header_counts_the_scenarios_the_run_asked() -> None:
    header = _read(html.run_header_html(summary([case("neutral")], scenarios=100))).text
    assert re.search(r"dataset fixtures/scenarios\.csv \(100 scenarios, policy strict\)", header)


def test_the_case_table_shows_each_cases_largest_change_and_a_failing_rise() -> None:
    table = html.summary_table_html("m", _gate_run()["cases"])
    text = _read(table).text
    assert "largest change vs baseline, points" in text
    assert "DirErr(less) +33.0 (p 0.0004) rose FAIL (rise)" in text
    assert text.endswith("direct-more-begin-std-one-word 5.0% 100.0% 5.0% 50.0% 0.0% 0.0% no change pass")


def test_generated_cases_count_in_the_verdict_where_the_summary_has_them() -> None:
    run = summary([case("neutral")])
    generated = case("neutral", dir_err={"less": 0.5})
    run["generated_cases"] = [dict(generated, case="generated:" + generated["case"])]
    text = _read(verdict_html(run)).text
    assert text.startswith("FAILED: 1 of 2 cases 1 over a ceiling")
    assert "generated:neutral-begin-std-one-word DirErr(less) 50.0% 20.0%" in text


def test_a_long_verdict_table_folds_its_rest_away_without_a_script() -> None:
    many = [case("direct-less", f"p{i}", dir_err={"less": 0.5}) for i in range(12)]
    got = verdict_html(summary(many))
    shown, folded = got.split("<details>")
    assert shown.count("DirErr(less)</td>") == 8 and folded.count("DirErr(less)</td>") == 4
    assert "<summary>4 more</summary>" in folded and "<script" not in got


def _title(fragment: str) -> str:
    found = re.search(r"<h2>(.*?)</h2>", fragment)
    assert found, fragment
    return unescape(found.group(1))


def test_the_box_says_the_verdict_line_the_terminal_and_the_job_summary_say() -> None:
    """One source (verdict/of_run.py) for the report's title, the terminal's line and the job summary's:
    a run that fails a case and a gated cue-invariance check says it in the same words everywhere."""
    run = summary([case("neutral", dir_err={"less": 0.5}), case("direct-less")])
    run["invariance"] = {
        **run["invariance"],
        "gated": True,
        "cues": [{"case": "direct-less-begin-std-one-word", "passed": False, "breaches": ["drift over 0.1"]}],
    }
    assert _title(verdict_html(run)) == verdict(run).line == "FAILED: 1 of 2 cases and 1 other checks"
    run |= {"status": "incomplete", "incomplete_reasons": ["the run was interrupted (Ctrl-C)"]}
    said = verdict(run).line
    assert said.startswith("INCOMPLETE (the run was interrupted (Ctrl-C)): ")
    assert _title(verdict_html(run).split("</ul>", 1)[1]) == said.split("(Ctrl-C)): ", 1)[1], (
        "under the INCOMPLETE banner, the same line without the INCOMPLETE it already says"
    )


def test_an_incomplete_night_that_reported_no_case_says_so_not_all_0_cases() -> None:
    """A stand-in record (the night ended before its summary) has no case: "all 0 cases" read as a pass."""
    stand_in = {"cases": [], "status": "incomplete", "incomplete_reasons": ["the runner ran out of memory"]}
    line = verdict(stand_in).line
    assert line == "INCOMPLETE (the runner ran out of memory): no case reported", line
    assert not verdict(stand_in).passed
