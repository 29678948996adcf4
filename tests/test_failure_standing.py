"""New or known: against a baseline, each failed case is new (the base passed it) or known (the base fails
it too, on the same ceilings); the terminal, summary.json, the report and the job summary say which, and
--fail-on=new fails the run on new failures only, reporting known ones as xfailed.

The demo model under ceilings of 50% fails four of its cases; its own answers, written as the baseline,
fail them too (all known); the same baseline with one case's answers made right makes that case new."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.suite_runner import SuiteRun, run_suite
from helpers.usage import refused

from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.scoring.metrics import percent

CASES = ("neutral", "direct-more", "direct-less", "indirect-more")
ARGS = ("--limit=30", f"--framings={','.join(CASES)}", "--positions=begin")
RIGHTED = "direct-less-begin-std-one-word"
"""The case whose baseline answers are made right: the base passes it, so its failure is new."""


def _thresholds(folder: Path, max_increase: float) -> Path:
    path = folder / f"thresholds-{max_increase}.toml"
    path.write_text(
        f"[default]\ndir_err = 0.5\ninvalid_rate = 0.1\nerror_rate = 0.02\nmax_increase = {max_increase}\n"
    )
    return path


@dataclass
class Gate:
    folder: Path
    own: Path
    """The demo model's own answers: every failure of the same model is known."""
    righted: Path
    """The same, with RIGHTED's answers made right."""
    thresholds: Path


pytestmark = pytest.mark.xdist_group("failure_standing")
"""One worker runs this module's tests, so its module-scoped fixtures (`gate`) are built once."""


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    folder = tmp_path_factory.mktemp("standing")
    thresholds = _thresholds(folder, 0.05)
    own = folder / "baseline.txt"
    base = run_suite(folder, *ARGS, f"--thresholds={thresholds}", f"--update-baseline={own}")
    assert base.returncode == 1 and "baseline written" in base.output, base.output
    answers = reader.load(own)
    golds = {str(r["scenario"]): str(r["gold"]) for r in base.records}
    cases = {**answers.cases, RIGHTED: {s: golds[s] for s in answers.scenarios}}
    righted = writer.write(Baseline(**{**answers.__dict__, "cases": cases}), folder / "righted.txt")
    return Gate(folder, own, righted, thresholds)


def _run(gate: Gate, tmp_path: Path, base: Path, *args: str, thresholds: Path | None = None) -> SuiteRun:
    return run_suite(
        tmp_path, *ARGS, f"--thresholds={thresholds or gate.thresholds}", f"--baseline={base}", *args
    )


def test_failing_as_its_base_does_is_known_and_passes_under_fail_on_new(
    gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    junit = tmp_path / "junit.xml"
    run = _run(gate, tmp_path, gate.own, "--fail-on=new", f"--junitxml={junit}", "-rx")
    assert run.returncode == 0, run.output
    summary = run.summary
    assert summary["failures"] == {"new": 0, "known": 4}
    assert summary["baseline"]["fail_on"] == "new"
    for case_id in (f"{f}-begin-std-one-word" for f in CASES):
        case = run.case(case_id)
        assert not case["passed"] and case["standing"] == "known", case_id
        assert set(case["breaches"]) & set(case["baseline"]["base"]["breaches"]), case
        assert run.table_row(case_id).endswith("FAIL (known)")
    assert "4 xfailed" in run.output
    assert (
        "failures against the baseline: 0 new (the base passed them, or they got significantly worse), 4 known "
        "(the base fails them too); --fail-on=new: the known ones are xfailed" in run.table
    )
    neutral = run.case("neutral-begin-std-one-word")
    metric = neutral["breaches"][0]  # the value over its ceiling, e.g. DirErr(equal)
    label = metric.removeprefix("DirErr(").rstrip(")")
    now, base = percent(neutral["scores"]["dir_err"][label]), percent(neutral["baseline"]["base"]["values"][metric])
    xfail = "XFAIL mathcomp_tests/suite/test_framing.py::test_framing[neutral-begin-std-one-word] - known: "
    assert xfail + f"the base fails it too ({metric} {base} on the base, {now} now, ceiling 50.0%" in run.output
    # The project's own check (conftest.py: a direct cue's rise over neutral) fails the base too.
    cued = run.case("direct-less-begin-std-one-word")["scores"]["dir_err"]["less"]  # the base's, too: its own answers
    assert f"the project's own check on the base: DirErr(less) under direct-less is {cued:.3f}" in run.output
    skipped = [tc.find("skipped") for tc in ET.parse(junit).getroot().iter("testcase")]
    assert len(skipped) == 4 and all(s is not None and s.get("type") == "pytest.xfail" for s in skipped)
    assert all(s is not None and s.get("message", "").startswith("known: the base fails it too (") for s in skipped)
    page = (run.run_dir / "report.html").read_text()
    assert "PASSED: no new failure; 4 of 4 cases fail as the base does (known)" in page
    assert f"known (base {base})" in page
    text = step_summary.read_text()
    assert text.startswith(  # 30 scenarios: no case sees a rise of 15 points, and the verdict says so
        "## MathComp: PASSED: no new failure; 4 of 4 cases fail as the base does (known); "
        "4 could not see a rise under 15 points\n"
    )
    assert f"| known | neutral-begin-std-one-word | {metric} | {now} (base {base}) | ceiling 50.0% |" in text
    assert "| new |" not in text


def test_a_case_its_base_passed_is_new_and_fails_under_fail_on_new(
    gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    run = _run(gate, tmp_path, gate.righted, "--fail-on=new")
    assert run.returncode == 1, run.output
    assert run.summary["failures"] == {"new": 1, "known": 3}
    new = run.case(RIGHTED)
    assert new["standing"] == "new" and "DirErr(less) rise" in new["breaches"]  # a rise is always new
    assert run.table_row(RIGHTED).endswith("FAIL (new)")
    assert run.table_row("neutral-begin-std-one-word").endswith("FAIL (known)")
    assert "1 failed" in run.output and "3 xfailed" in run.output
    page = (run.run_dir / "report.html").read_text()
    assert "FAILED: 4 of 4 cases (1 new, 3 known)" in page
    text = step_summary.read_text()
    assert re.match(  # appended
        r"earlier step\n## MathComp: FAILED: 4 of 4 cases \(1 new, 3 known\); "
        r"\d could not see a rise under 15 points\n",
        text,
    )
    rows = [line for line in text.splitlines() if line.startswith("| new |") or line.startswith("| known |")]
    assert [r.split(" | ")[0] for r in rows] == sorted((r.split(" | ")[0] for r in rows), key=lambda s: s != "| new")
    rise = next(r for r in rows if "DirErr(less) rise" in r)
    change = new["baseline"]["changes"]["less"]
    p = f"{change['p_value']:.2g}"
    now = new["scores"]["dir_err"]["less"]
    shown = f"| new | {RIGHTED} | DirErr(less) rise | 0.0% → {percent(now)} | {100 * now:+.1f} points (max 5.0) | {p} |"
    assert rise.startswith(shown), rise
    # the righted case rose twice: DirErr(less), and its toward-cue rate against the neutral case
    assert f"Baseline hf:fixtures/models/mathcomp-tiny ({gate.righted}): 4 cases compared, 2 rises" in text
    assert new["breaches"][1:3] == ["DirErr(less) rise", "toward-cue rate(less) rise"], new["breaches"]
    assert f"Report: `{run.run_dir / 'report.html'}`" in text
    # Without --fail-on=new, every failure fails the run and nothing is xfailed.
    plain = _run(gate, tmp_path, gate.righted)
    assert plain.returncode == 1 and "xfailed" not in plain.output and "4 failed" in plain.output


def test_a_ceiling_the_base_stays_under_makes_a_new_failure_without_a_rise(gate: Gate, tmp_path: Path) -> None:
    """max_increase 1: no rise can fail a case; the case the base passes is new on its ceiling alone."""
    lenient = _thresholds(tmp_path, 1.0)
    run = _run(gate, tmp_path, gate.righted, "--fail-on=new", thresholds=lenient)
    assert run.returncode == 1, run.output
    new = run.case(RIGHTED)
    assert new["standing"] == "new" and new["breaches"][0] == "DirErr(less)"
    assert not any(b.endswith(" rise") for b in new["breaches"])
    assert new["baseline"]["base"]["breaches"] == [] and new["baseline"]["base"]["values"]["DirErr(less)"] == 0.0
    assert run.summary["failures"] == {"new": 1, "known": 3}


def test_without_a_baseline_there_is_no_standing_and_fail_on_new_is_a_usage_error(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    run = refused(pytester, tmp_path, "--model=symbolic", "--limit=5", "--framings=neutral", "--fail-on=new")
    assert run.returncode == 4, run.output
    assert "--fail-on=new needs a baseline (--baseline or --baseline-model, not --update-baseline)" in run.output
    assert "Traceback" not in run.output and not (tmp_path / "reports").exists()
    plain = run_suite(tmp_path, "--model=symbolic", "--limit=5", "--framings=neutral")
    assert plain.returncode == 0, plain.output
    assert plain.summary["failures"] is None
    assert all(c["standing"] is None for c in plain.summary["cases"])
    assert json.loads(json.dumps(plain.summary))["baseline"] is None
