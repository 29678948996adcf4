"""Report fragments escape everything a model wrote."""

from __future__ import annotations

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


def _decoded(png: bytes) -> Any:
    import io

    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(png), format="png")


def test_direction_heatmaps_draw_one_panel_per_direction_and_mark_failing_cells() -> None:
    from mathcomp_tests.report import figures, sections

    cases = _grid_cases(("std",))
    png = figures.direction_heatmaps(sections._rows_by_position(cases, "std"), "caption")
    image = _decoded(png)
    height, width = image.shape[:2]
    assert width > 500 and height > 400, "three stacked panels, legible at normal size"
    assert image[..., :3].std() > 0.05, "not a blank picture"
    # Framed cells are drawn in near-black: the failing direct-more cells add dark pixels.
    passing = [dict(c, breaches=[]) for c in cases]
    plain = _decoded(figures.direction_heatmaps(sections._rows_by_position(passing, "std"), "caption"))
    assert (image[..., :3] < 0.15).sum() > (plain[..., :3] < 0.15).sum() + 500


def test_figure_sections_add_identity_tables_and_the_baseline_change_when_there_are_some() -> None:
    from mathcomp_tests.report.sections import run_figures_html

    plain = run_figures_html(_grid_cases(("std",)), [])
    assert plain.count('class="mathcomp-figure"') == 1
    both = run_figures_html(_grid_cases(("std", "woman"), compared=True), [])
    assert both.count('class="mathcomp-figure"') == 3
    assert 'alt="identity table, format one-word"' in both and 'alt="change against the baseline' in both
    assert both.count('src="data:image/png;base64,') == 3


def test_importing_the_plugin_does_not_import_matplotlib() -> None:
    import subprocess
    import sys

    from helpers.suite_runner import REPO

    code = "import sys, mathcomp_tests.plugin; print(sorted(m for m in ('matplotlib', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _dark(image: Any) -> int:
    return int((image[..., :3] < 0.15).all(axis=-1).sum())


def _white(image: Any) -> int:
    return int((image[..., :3] > 0.92).all(axis=-1).sum())


def test_the_fails_frame_shows_on_a_near_black_cell() -> None:
    from helpers.summaries import case

    from mathcomp_tests.report import figures, sections

    cells = [case("direct-more", p, dir_err={"more": 1.0}, ceiling=0.2) for p in ("begin", "end")]
    passing = [dict(c, breaches=[]) for c in cells]
    framed = _decoded(figures.direction_heatmaps(sections._rows_by_position(cells, "std"), "x"))
    plain = _decoded(figures.direction_heatmaps(sections._rows_by_position(passing, "std"), "x"))
    # At 100% the cell is the darkest red; only a light line inside the frame tells it apart.
    assert _white(framed) > _white(plain) + 300


def test_the_change_map_frames_a_breach_thickly_and_a_significant_fall_thinly() -> None:
    from helpers.summaries import case, change

    from mathcomp_tests.report import figures, sections

    def drawn(c: dict[str, Any]) -> Any:
        cases = [case("neutral", p, changes={"less": c}) for p in ("begin", "end")]
        return _decoded(figures.delta_heatmaps(sections._rows_by_position(cases, "std"), "x"))

    none = drawn(change(0.2, 0.3))
    rise = drawn(change(0.2, 0.001))
    fall = drawn(change(-0.2, 0.001))
    assert rise.shape == none.shape == fall.shape
    assert _dark(rise) > _dark(none) + 500, "a breach: a thick frame"
    assert _dark(fall) < _dark(none) + 100, "an improvement is no failure: no thick frame"
    grey = ((fall[..., :3] > 0.2) & (fall[..., :3] < 0.35)).all(axis=-1).sum()
    assert grey > ((none[..., :3] > 0.2) & (none[..., :3] < 0.35)).all(axis=-1).sum() + 100, "but a thin one"


def test_the_category_chart_draws_the_baseline_on_the_same_items() -> None:
    from mathcomp_tests.report import figures, pooled, sections

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
    with_base = _decoded(figures.category_bars(now, "x", base))
    without = _decoded(figures.category_bars(now, "x"))
    assert _dark(with_base) > _dark(without) + 100
    assert "Black bars: the baseline" in sections.run_figures_html(_grid_cases(("std",)), records, baseline)


def test_a_cue_invariance_row_without_a_ceiling_says_so() -> None:
    from mathcomp_tests.report.invariance import _verdict

    assert _verdict({"passed": True, "ceilings": {}, "breaches": []}, gated=True) == "no ceiling"
    assert (
        _verdict({"passed": True, "ceilings": {"flip_rate": {"all": 0.1}}, "breaches": []}, gated=True)
        == "pass"
    )
