"""`mathcomp plan`: before a gated run, the smallest rise each test sees and the scenarios it needs, from
assumed rates, a base's run folder (a real suite run) or its committed baseline file; bad input is one line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite
from helpers.usage import call

from mathcomp_tests.cli import plan
from mathcomp_tests.scoring import power

BASELINE = REPO / "baseline.txt"
"""The demo model's committed baseline: it answers more on every item under the more cues."""


def row(out: str, framing: str, label: str) -> list[str]:
    """The table's cells for ``framing`` and ``label``, split on runs of two spaces or more."""
    (line,) = [line for line in out.splitlines() if re.match(rf"{re.escape(framing)}\s+{label}\s{{2,}}", line)]
    return re.split(r"\s{2,}", line.strip())


pytestmark = pytest.mark.xdist_group("plan")
"""One worker runs this module's tests, so its module-scoped fixtures (`base_run`) are built once."""


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run folder: the symbolic reference on 30 scenarios, two cases."""
    run = run_suite(
        tmp_path_factory.mktemp("base"),
        "--model=symbolic",
        "--limit=30",
        "--framings=neutral,direct-more",
        "--positions=end",
    )
    assert run.returncode == 0, run.output
    return run.run_dir


def test_an_assumed_rate_gives_every_framing_the_same_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "plan", "--base-rate", "0.2")
    assert code == 0 and err == ""
    assert "14 cases" in out and "42 tests" in out and "level 0.05 (without --holm)" in out
    cells = row(out, "every framing", "less")
    # 300 bundled scenarios, 181 of gold other than less; the base answers less on 20% of them
    pairs, hits, _ = power.at_scale(181 / 300, 0.2, 0.0, 300)
    assert (pairs, hits) == (181, 36)
    mde = power.rise_power(181, 36, 0.05, 0.05).mde
    assert mde is not None
    assert cells[2:5] == ["0.20", "181", f"+{100 * mde:.1f}"]
    needed = power.scenarios_for(181 / 300, 0.2, 0.10, 0.05, 0.05)
    assert cells[5] == f"{needed} (the 300 suffice)"
    assert "pytest --model=<fine-tune> --baseline=base.txt\n" in out


def test_holm_lowers_the_level_and_asks_for_more_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    _, plain, _ = call(capsys, "plan")
    code, out, _ = call(capsys, "plan", "--holm", "--scenarios", "300,1000,3000")
    assert code == 0 and "level 0.00119 (--holm: 0.05 / 42)" in out
    assert re.search(
        r"^framing\s+label\s+base\s+pairs\s+at 300\s+at 1,000\s+at 3,000\s+scenarios for \+10.0$", out, re.M
    )
    assert int(row(out, "every framing", "less")[-1].split()[0]) > int(
        row(plain, "every framing", "less")[-1].split()[0]
    )
    assert out.splitlines()[-2:] == [
        "  pytest --model=<fine-tune> --baseline=base.txt --holm",
        "  (its 300 scenarios suffice for every test that can see the rise)",
    ]


def test_beyond_the_bundled_set_the_plan_sends_the_tests_to_generated_scenarios(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = call(
        capsys, "plan", "--base-rate", "0.5", "--churn", "0.2", "--holm", "--framings", "neutral"
    )
    assert code == 0
    generated = power.scenarios_for(2 / 3, 0.5, 0.10, 0.05, 0.05 / 6, churn=0.2)
    assert generated is not None and generated > 300
    assert f"beyond the dataset's 300; --generated={generated}" in out
    assert (
        f"pytest --model=<base> --generated={generated} --update-baseline=base.txt --framings=neutral   # once"
        in out
    )
    assert (
        f"pytest --model=<fine-tune> --baseline=base.txt --generated={generated} --framings=neutral --holm"
        in out
    )
    assert "the two do not pool" in out


def test_the_committed_baseline_says_plainly_where_no_rise_can_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = call(capsys, "plan", "--base", str(BASELINE))
    assert code == 0
    cells = row(out, "direct-more, indirect-more", "more")
    assert cells[2:5] == ["1.00", "213", "no room"]
    assert cells[5] == "cannot rise by +10.0: the base answers more on 100% (at most +0.0)"
    less = row(out, "direct-less, indirect-less", "less")  # 92% already: at most +7.7 of the +10 asked
    assert less[5].startswith("cannot rise by +10.0: the base answers less on 92% (at most +7.")
    assert "hf:fixtures/models/mathcomp-tiny" in out


def test_a_base_run_folder_uses_each_cases_own_answers(
    base_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [json.loads(line) for line in (base_run / "results.jsonl").read_text().splitlines()]
    less_pairs = sum(1 for r in records if r["case"] == "neutral-end-std-one-word" and r["gold"] != "less")
    code, out, _ = call(
        capsys, "plan", "--base", str(base_run), "--framings", "neutral,direct-more", "--positions", "end"
    )
    assert code == 0
    assert "(symbolic, 30 scenarios)" in out
    cells = row(out, "every framing", "less")  # the reference is always right: DirErr 0 on every case
    assert cells[2:4] == ["0.00", str(less_pairs)]
    needed = int(cells[5].split()[0])
    assert 30 < needed <= 300 and cells[5].endswith("(of the dataset's 300; the base answered 30)")
    assert (
        "pytest --model=symbolic --update-baseline=base.txt --framings=neutral,direct-more --positions=end"
        in out
    )


def test_cases_the_base_lacks_are_listed_not_dropped(
    base_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = call(capsys, "plan", "--base", str(base_run))
    assert code == 0
    assert "not in the base, left out of the plan (12): neutral-begin-std-one-word," in out


def test_the_real_command_prints_the_plan_and_its_help_is_the_docstring() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "plan", "--framings", "neutral", "--rise", "0.2"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "target: a rise of +20.0 points seen with 80% power" in proc.stdout
    assert "neutral" in proc.stdout and "Traceback" not in proc.stderr
    assert plan.__doc__ is not None and plan.HELP


def test_the_help_text_is_the_module_docstring(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "plan", "--help")
    assert code == 0 and "cannot rise" in out and "--base-rate" in out and "--churn" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--base-rate", "1.5"], "argument --base-rate: 1.5: expected a number from 0 to 1"),
        (["--base-rate", "x"], "argument --base-rate: 'x': expected a number between 0 and 1"),
        (["--rise", "0"], "argument --rise: 0: expected a number above 0 to 1"),
        (["--power", "1"], "argument --power: 1: expected a number above 0 and below 1"),
        (["--scenarios", "300,0"], "every number of scenarios must be from 1 to 1,000,000,000"),
        (["--scenarios", "10000000000"], "every number of scenarios must be from 1 to 1,000,000,000"),
        (["--framings", "neutral,"], "an empty framing"),
        (["--base", "no/such/run"], "--base no/such/run: no such run folder or baseline file"),
        (["--base", "baseline.txt", "--base-rate", "0.2"], "not allowed with argument"),
    ],
)
def test_bad_input_is_one_usage_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = call(capsys, "plan", *argv)
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1


def test_a_folder_that_is_not_a_run_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = call(capsys, "plan", "--base", str(tmp_path))
    assert code == 2 and f"--base {tmp_path}: not a run folder (no summary.json)" in err


def test_a_base_without_the_selected_cases_is_a_usage_error(
    base_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = call(capsys, "plan", "--base", str(base_run), "--framings", "direct-less")
    assert code == 2 and "none of the 2 selected cases is in it" in err


def test_a_damaged_run_folder_is_one_line_and_exit_1(
    base_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged = tmp_path / "run"
    shutil.copytree(base_run, damaged)
    with open(damaged / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write("not json\n")
    code, out, err = call(capsys, "plan", "--base", str(damaged))
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: baseline {damaged / 'results.jsonl'}: line 61 is not a JSON record")


def test_a_runs_summary_json_stands_for_its_folder(base_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--framings", "neutral,direct-more", "--positions", "end")
    code, out, err = call(capsys, "plan", "--base", str(base_run / "summary.json"), *args)
    assert code == 0, err
    assert call(capsys, "plan", "--base", str(base_run), *args)[1] == out


def test_where_no_test_can_see_the_rise_the_plan_says_so_not_that_the_scenarios_suffice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = call(capsys, "plan", "--framings", "neutral", "--positions", "end", "--rise", "0.04")
    assert code == 0
    assert "suffice" not in out
    assert "no test of this selection can see a rise of +4.0 points at any number of scenarios" in out


def test_too_few_scenarios_and_no_room_are_told_apart(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "plan", "--base", str(BASELINE), "--scenarios", "5,300")
    assert code == 0
    less = row(out, "neutral", "less")
    assert less[4] == "too few", less  # 5 scenarios: no rise is significant, more would see one
    assert row(out, "direct-more, indirect-more", "more")[4:6] == ["no room", "no room"]


def test_a_plan_writes_nothing_into_the_folder_it_runs_in(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "plan", "--framings", "neutral"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == [], "a plan left files behind"


def test_a_base_that_kept_probabilities_plans_the_soft_tests_as_the_gate_states_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo model under --scoring=logprob on 40 scenarios: its direct-less case answers less on nearly
    every item (the letter test cannot see +10 points), but each label's soft test can, and the plan's
    soft MDE at 40 is the one the gate states for the same base (a run that changed nothing)."""
    path = tmp_path / "base.txt"
    selection = ("--framings=neutral,direct-less", "--positions=end", "--limit=40", "--generated=0")
    demo = ("--model=hf:fixtures/models/mathcomp-tiny", "--scoring=logprob", *selection)
    assert run_suite(tmp_path / "base", *demo, f"--update-baseline={path}").returncode == 0
    gated = run_suite(tmp_path / "gated", *demo, f"--baseline={path}")
    stated = {
        (c["framing"], y): t["power"]["mde"] for c in gated.summary["cases"] for y, t in c["baseline"]["soft"].items()
    }
    code, out, _ = call(capsys, "plan", "--base", str(path), "--framings", "neutral,direct-less", "--positions", "end")
    assert code == 0
    letters = row(out, "direct-less", "less")
    assert letters[5].startswith("cannot rise by +10.0: the base answers less on"), letters
    soft = row(out, "direct-less", "less soft")
    assert soft[4] == f"+{100 * stated[('direct-less', 'less')]:.1f}", (soft, stated)
    assert row(out, "neutral", "more soft")[4] == f"+{100 * stated[('neutral', 'more')]:.1f}"
    assert "--scoring=logprob" in out.split("to get there:")[1], "the command keeps the scoring the soft tests need"
