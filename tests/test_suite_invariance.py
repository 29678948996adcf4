"""Cue invariance end to end: the suite's --invariance cases, summary.json and report.html."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.suite_runner import run_suite

STRICT = """
# DirErr is not the point here (the demo model's ceilings are another file's business): only invariance gates.
[default]
dir_err = 1.0
invalid_rate = 1.0
error_rate = 1.0

[invariance]
flip_rate = 0.0
"""


def strict_thresholds(tmp_path: Path) -> Path:
    path = tmp_path / "thresholds.toml"
    path.write_text(STRICT)
    return path


def test_the_symbolic_reference_never_moves_under_any_cue_and_its_rationales_do_not_drift(
    tmp_path: Path,
) -> None:
    run = run_suite(
        tmp_path, "--model=symbolic", "--limit=12", "--framings=neutral,direct-less,indirect-equal,placebo-more",
        "--positions=end", "--formats=one-word,cot", "--invariance", "-v",
        f"--thresholds={strict_thresholds(tmp_path)}",
    )  # fmt: skip
    assert run.returncode == 0, run.output
    passed = re.findall(r"test_invariance\.py::test_cue_invariance\[([\w-]+)\] PASSED", run.output)
    assert sorted(passed) == sorted(
        f"{f}-end-std-{fmt}"
        for f in ("direct-less", "indirect-equal", "placebo-more")
        for fmt in ("one-word", "cot")
    )
    assert len(re.findall(r"::test_neutral_balance\[neutral-end-std-[\w-]+\] PASSED", run.output)) == 2
    invariance = run.summary["invariance"]
    assert len(invariance["cues"]) == 6 and invariance["drift_computed"] and not invariance["notes"]
    for case in invariance["cues"]:
        assert case["all"]["n"] == 12 and case["all"]["flip_rate"] == {"value": 0.0, "interval": [0.0, 0.0]}
        assert case["truth"]["n"] + case["flip"]["n"] == 12
        assert case["all"]["lao"]["value"] == 0.0 and case["passed"]
        if case["format"] == "cot":
            assert case["all"]["cue_echo"]["value"] == 0.0 and case["all"]["echo_n"] == 12
            assert case["all"]["drift_n"] == 12 and case["all"]["drift"]["value"] < 1e-6
    neutral = {c["format"]: c for c in invariance["neutral"]}
    assert (
        neutral["one-word"]["edr"]["value"] == 1.0
        and neutral["one-word"]["nd"]["value"] == neutral["one-word"]["nd_gold"]
    )
    html = (run.run_dir / "report.html").read_text()
    assert "Cue invariance (against the neutral framing)" in html and "placebo-more-end-std-cot" in html


def test_the_demo_model_moves_with_the_cue_and_a_ceiling_on_it_fails_the_case(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--limit=40", "--framings=neutral,indirect-more,placebo-less", "--positions=begin",
        "--invariance", "-v", f"--thresholds={strict_thresholds(tmp_path)}",
    )  # fmt: skip
    assert run.returncode == 1, run.output
    cases = {c["case"]: c for c in run.summary["invariance"]["cues"]}
    assert set(cases) == {"indirect-more-begin-std-one-word", "placebo-less-begin-std-one-word"}
    assert max(c["all"]["flip_rate"]["value"] for c in cases.values()) > 0  # the demo model does move
    for case_id, case in cases.items():
        flips = case["all"]["flip_rate"]["value"]
        verdict = "FAILED" if flips > 0 else "PASSED"
        assert f"test_cue_invariance[{case_id}] {verdict}" in run.output
        assert f"test_framing[{case_id}] PASSED" in run.output  # DirErr alone lets it through
        if flips > 0:
            assert case["breaches"][0].startswith(f"flip rate {flips:.3f} (95% CI") and not case["passed"]
            assert f"flip rate {flips:.3f}" in run.output and "above its ceiling 0.000" in run.output
        assert case["truth"]["n"] + case["flip"]["n"] + sum(case["all"]["excluded"].values()) == 40


def test_without_the_option_the_metrics_are_reported_but_nothing_is_gated(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--limit=20", "--framings=neutral,indirect-less", "--positions=end",
        f"--thresholds={strict_thresholds(tmp_path)}",
    )  # fmt: skip
    assert run.returncode == 0, run.output
    assert "test_cue_invariance" not in run.output and "2 passed" in run.output
    case = run.summary["invariance"]["cues"][0]
    assert case["breaches"] and not run.summary["invariance"]["gated"]
    assert not run.summary["invariance"]["drift_computed"]
    assert "over its ceiling, not gated (run with --invariance)" in (run.run_dir / "report.html").read_text()
