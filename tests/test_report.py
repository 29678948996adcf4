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


def test_heatmap_has_one_row_per_framing_and_one_column_per_position_and_identity() -> None:
    from mathcomp_tests.report import heatmaps_html

    cases = []
    for framing in ("neutral", "direct-more"):
        for position in ("begin", "end"):
            for identity in ("std", "woman"):
                case = _case("more")
                case.update(framing=framing, position=position, identity=identity, format="one-word")
                case["scores"]["dir_err"] = {
                    "less": 0.0,
                    "more": 0.25 if framing == "direct-more" else 0.0,
                    "equal": None,
                }
                cases.append(case)
    parsed = _Tags()
    parsed.feed(heatmaps_html(cases))
    text = [t.strip() for t in parsed.text if t.strip()]
    assert text.count("framing") == 3, "one table per label"
    assert parsed.tags.count("tr") == 3 * 3
    assert text.count("25.0") == 4 and "DirErr(more) %, format one-word" in text
