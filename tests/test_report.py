"""Report fragments escape everything a model wrote."""

from __future__ import annotations

from html import escape
from html.parser import HTMLParser
from typing import Any

from mathcomp_tests.report import case_extra_html, summary_table_html

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _case(raw: str) -> dict[str, Any]:
    confusion = {
        g: {o: 0 for o in ("less", "more", "equal", "invalid", "error")} for g in ("less", "more", "equal")
    }
    confusion["less"]["invalid"] = 1
    return {
        "case": "neutral-end-std-one-word",
        "passed": False,
        "scores": {
            "confusion": confusion,
            "dir_err": {"less": 0.0, "more": 0.0, "equal": 0.0},
            "accuracy": 0.0,
            "invalid_rate": 1.0,
            "error_rate": 0.0,
        },
        "ceilings": {
            "dir_err": {"less": 0.2, "more": 0.2, "equal": 0.2},
            "invalid_rate": 0.1,
            "error_rate": 0.0,
        },
        "examples": [{"scenario": "7", "gold": "less", "read": "invalid", "raw": raw, "prompt_tail": "..."}],
    }


def test_model_text_in_a_case_extra_is_shown_as_text_never_as_markup() -> None:
    parsed = _Tags()
    parsed.feed(case_extra_html(_case(HOSTILE)))
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert HOSTILE in "".join(parsed.text)


def test_summary_table_marks_breaches_and_escapes_the_model_name() -> None:
    html = summary_table_html("<b>model</b>", [_case("more")])
    parsed = _Tags()
    parsed.feed(html)
    assert "b" not in parsed.tags and "<b>model</b>" in "".join(parsed.text)
    assert "FAIL" in parsed.text and 'style="background:#f8d7da"' in html


def _grid_cases(identities: tuple[str, ...], compared: bool = False) -> list[dict[str, Any]]:
    cases = []
    for framing in ("neutral", "direct-more"):
        for position in ("begin", "end"):
            for identity in identities:
                case = _case("more")
                case.update(framing=framing, position=position, identity=identity, format="one-word")
                case["breaches"] = ["DirErr(more)"] if framing == "direct-more" else []
                case["scores"]["dir_err"] = {
                    "less": 0.0,
                    "more": 0.25 if framing == "direct-more" else 0.0,
                    "equal": None,
                }
                if compared:
                    change = {
                        "difference": 0.1,
                        "p_value": 0.01,
                        "significant": True,
                        "breach": True,
                        "max_increase": 0.05,
                        "low": 0.02,
                        "high": 0.2,
                    }
                    case["baseline"] = {
                        "status": "compared",
                        "changes": dict.fromkeys(("less", "more", "equal"), change),
                    }
                cases.append(case)
    return cases


class _Cells(HTMLParser):
    """Each chart table's caption and its cells' classes and texts, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self._where: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"caption": "", "cells": []})
        elif tag == "caption":
            self._where = "caption"
        elif tag == "td" and self.tables:
            self.tables[-1]["cells"].append({"class": (a.get("class") or "").split(), "text": ""})
            self._where = "td"
        for name in ("img", "script"):
            assert tag != name, f"a chart is drawn in HTML, with no <{name}>"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("caption", "td"):
            self._where = None

    def handle_data(self, data: str) -> None:
        if self._where == "caption":
            self.tables[-1]["caption"] += data
        elif self._where == "td":
            self.tables[-1]["cells"][-1]["text"] += data


def _cells(chart: str) -> list[dict[str, Any]]:
    parsed = _Cells()
    parsed.feed(chart)
    return parsed.tables


def test_direction_heatmaps_draw_one_panel_per_direction_and_mark_failing_cells() -> None:
    from mathcomp_tests.report import charts, sections

    cases = _grid_cases(("std",))
    tables = _cells(charts.direction_heatmaps(sections._rows_by_position(cases, "std"), "caption"))
    assert [t["caption"] for t in tables] == ["DirErr(less) %", "DirErr(equal) %", "DirErr(more) %"]
    more = tables[2]["cells"]  # rows begin, end; columns neutral, dir-more
    assert [c["text"] for c in more] == ["0.0≤20", "25.0≤20", "0.0≤20", "25.0≤20"]
    assert ["fail" in c["class"] for c in more] == [False, True, False, True], "direct-more fails: framed"
    assert [c["text"] for c in tables[1]["cells"]] == ["n/a"] * 4 and "na" in tables[1]["cells"][0]["class"]
    passing = [dict(c, breaches=[]) for c in cases]
    plain = _cells(charts.direction_heatmaps(sections._rows_by_position(passing, "std"), "caption"))
    assert not any("fail" in c["class"] for t in plain for c in t["cells"])


def test_chart_text_is_escaped() -> None:
    from mathcomp_tests.report import charts, sections

    hostile = '<img src=x onerror="alert(1)">'
    cases = [dict(c, identity=hostile) for c in _grid_cases(("std",))]
    chart = charts.identity_table(cases, [hostile], hostile)
    assert "<img" not in chart and escape(hostile) in chart
    assert "<img" not in sections.combined_figures_html([(hostile, _grid_cases(("std",)))])


def test_figure_sections_add_identity_tables_and_the_baseline_change_when_there_are_some() -> None:
    from mathcomp_tests.report.sections import run_figures_html

    plain = run_figures_html(_grid_cases(("std",)), [])
    assert plain.count('class="mathcomp-figure"') == 1
    both = run_figures_html(_grid_cases(("std", "woman"), compared=True), [])
    assert both.count('class="mathcomp-figure"') == 3
    assert 'aria-label="identity table, format one-word"' in both and 'aria-label="change against the baseline' in both
    assert "data:image" not in both, "no picture to render: the charts are HTML"
    identity = _cells(both)[-3:]  # less, equal, more: rows framing x position, columns std and woman
    assert [len(t["cells"]) for t in identity] == [8, 8, 8]


def test_importing_the_plugin_does_not_import_matplotlib_numpy_or_sympy() -> None:
    import subprocess
    import sys

    from helpers.suite_runner import REPO

    heavy = "('matplotlib', 'numpy', 'sympy')"
    code = f"import sys, mathcomp_tests.plugin; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_runs_report_draws_without_matplotlib() -> None:
    """The report's charts are HTML: a run's end pays no plotting library (seconds a run)."""
    import subprocess
    import sys

    from helpers.suite_runner import REPO

    code = (
        "import sys\n"
        "from helpers.summaries import case, change, summary\n"
        "from mathcomp_tests.report.sections import run_figures_html\n"
        "cases = [case('neutral', p, changes={'less': change(0.2, 0.001)}) for p in ('begin', 'end')]\n"
        "records = [{'case': 'c', 'scenario': str(i), 'category': 'money', 'gold': 'more', 'label': 'less', "
        "'status': 'ok'} for i in range(9)]\n"
        "html = run_figures_html(cases, records)\n"
        "print(html.count('mathcomp-figure\"'), 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO / "tests", capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["3", "False"], out.stdout


def test_the_change_map_frames_a_breach_thickly_and_a_significant_fall_thinly() -> None:
    from helpers.summaries import case, change

    from mathcomp_tests.report import charts, sections

    def drawn(c: dict[str, Any]) -> list[str]:
        cases = [case("neutral", p, changes={"less": c}) for p in ("begin", "end")]
        less = _cells(charts.delta_heatmaps(sections._rows_by_position(cases, "std"), "x"))[0]
        assert less["caption"] == "change in DirErr(less), points"
        return [c["class"] for c in less["cells"]][0]

    assert "fail" in drawn(change(0.2, 0.001)), "a breach: a thick frame"
    fall = drawn(change(-0.2, 0.001))
    assert "fail" not in fall and "changed" in fall, "an improvement is no failure: a thin frame"
    none = drawn(change(0.2, 0.3))
    assert "fail" not in none and "changed" not in none, "not significant: no frame"


def test_the_category_chart_draws_the_baseline_on_the_same_items() -> None:
    from mathcomp_tests.report import charts, pooled, sections

    golds = ["less", "more", "equal"] * 10
    records = [
        {
            "case": "c",
            "scenario": str(i),
            "category": "money" if i % 2 else "time",
            "gold": g,
            "label": "less",
            "status": "ok",
        }
        for i, g in enumerate(golds)
    ]
    baseline = {"c": {str(i): g for i, g in enumerate(golds)}}  # the baseline was always right
    now, base = pooled.by_category(records), pooled.by_category(records, baseline)
    assert now["money"]["less"] is not None and now["money"]["less"][0] == 1.0
    assert base["money"]["less"] is not None and base["money"]["less"][0] == 0.0
    with_base = charts.category_bars(now, "x", base)
    without = charts.category_bars(now, "x")
    assert with_base.count('class="base"') == 6 and 'class="base"' not in without
    assert 'style="width:100.0%;background:#1f77b4"' in with_base, "DirErr(less) 100% in both categories"
    assert "Black ticks: the baseline" in sections.run_figures_html(_grid_cases(("std",)), records, baseline)


def test_a_cue_invariance_row_without_a_ceiling_says_so() -> None:
    from mathcomp_tests.report.invariance import _verdict

    assert _verdict({"passed": True, "ceilings": {}, "breaches": []}, gated=True) == "no ceiling"
    assert (
        _verdict({"passed": True, "ceilings": {"flip_rate": {"all": 0.1}}, "breaches": []}, gated=True)
        == "pass"
    )


def _underpowered(case: str) -> dict[str, Any]:
    """An entry of summary.json's ``power.underpowered``: less sees a rise of 21.5 points, equal none."""
    return {"case": case, "labels": ["less", "equal"], "seen": {"less": 0.215, "more": 0.1, "equal": None}}


def test_under_the_verdict_the_cases_at_chance_and_those_that_could_not_see_a_rise_are_named() -> None:
    from mathcomp_tests.report import unseen

    at_chance = [{"case": HOSTILE, "accuracy": 0.2, "constant": 0.4, "label": "less"}]
    weak = [_underpowered("neutral-begin-std-one-word"), _underpowered("direct-more-begin-std-one-word")]
    power = {"detect_rise": 0.15, "compared": 28, "underpowered": weak, "required": True,
             "not_earned_by": ["direct-more-begin-std-one-word"]}  # fmt: skip
    html = unseen.section_html({"at_chance": at_chance, "power": power})
    parsed = _Tags()
    parsed.feed(html)
    assert "script" not in parsed.tags and "img" not in parsed.tags and escape(HOSTILE) in html
    text = parsed.text
    named = text.index(HOSTILE)  # its row: the case, its accuracy, the constant answer and what it gets right
    assert "AT CHANCE: 1 neutral case" in text and text[named + 1 : named + 4] == ["20.0%", "less", "40.0%"]
    assert "2 of 28 compared cases could not see a rise under 15 points" in text
    row = text.index("direct-more-begin-std-one-word")
    assert text[row + 1 : row + 3] == ["less (sees +21.5), equal (cannot rise)", "yes"]
    assert text[text.index("neutral-begin-std-one-word") + 2] == "no", "power was not required of it"


def test_a_summary_without_those_cases_or_from_before_at_chance_gets_no_section() -> None:
    from mathcomp_tests.report import unseen

    assert unseen.section_html({}) == ""  # written before the key, with no baseline
    assert unseen.section_html({"at_chance": [], "power": {"detect_rise": 0.15, "underpowered": []}}) == ""
    many = {"detect_rise": 0.15, "compared": 20, "underpowered": [_underpowered(f"c{i}") for i in range(20)]}
    html = unseen.section_html({"power": many})
    assert html.count("<details>") == 1 and "12 more" in html and "power required" not in html
