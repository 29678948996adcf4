"""The report's cue-invariance tables: rows per case and half, verdicts, everything escaped."""

from __future__ import annotations

from mathcomp_tests.report.invariance import invariance_html
from mathcomp_tests.scoring import cue_pairs
from mathcomp_tests.types import Condition

GOLD = {"s1": "more", "s2": "less", "s3": "equal", "s4": "less"}


def summary(gated: bool) -> dict:
    cued = {"s1": "less", "s2": "less", "s3": "less", "s4": "less"}
    condition = Condition("direct-less", "end", format="cot")
    case = cue_pairs.compare(
        cue_pairs.Answers(dict(GOLD), dict(GOLD), raw=dict.fromkeys(GOLD, "<b>x</b>")),
        cue_pairs.Answers(cued, dict(GOLD), raw=dict.fromkeys(GOLD, "So Person B spends less.")),
        condition,
        {"flip_rate": {"all": 0.1}},
        drift=False,
        reps=50,
    )
    neutral = cue_pairs.neutral_summary(
        cue_pairs.Answers(dict(GOLD), dict(GOLD)), Condition("neutral", "end", format="cot")
    )
    case["breaches"].append("<script>alert(1)</script>")
    return {"cues": [case], "neutral": [neutral], "notes": ["needs <pip install>"], "gated": gated}


def test_a_table_per_format_with_each_half_and_the_neutral_rates() -> None:
    html = invariance_html(summary(gated=True))
    assert "<b>Format cot</b>" in html and html.count("<td>direct-less-end-std-cot vs neutral</td>") == 1
    for half in ("all", "truth", "flip"):
        assert f"<td>{half}</td>" in html
    assert "<td>50.0% (" in html  # the flip rate with its interval
    assert "<th>cue echo</th>" in html and "<th>drift</th>" in html
    assert "<td>neutral-end-std-cot</td>" in html and "<td>100.0% (100.0 to 100.0)</td>" in html  # EDR
    assert "FAIL: flip rate 0.500" in html
    assert "<script>" not in html and "&lt;script&gt;" in html and "needs &lt;pip install&gt;" in html


def test_an_ungated_run_does_not_call_a_breach_a_failure() -> None:
    html = invariance_html(summary(gated=False))
    assert "FAIL" not in html and "over its ceiling, not gated (run with --invariance)" in html
    assert "Explanation drift is computed under --invariance" in html
    assert invariance_html({"cues": [], "neutral": []}) == "" and invariance_html(None) == ""
