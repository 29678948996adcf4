"""--update-baseline and --baseline through the suite: written, compared, refused before any case, Holm,
the baseline model asked in the same run, and generated cases drawn alike."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite
from helpers.usage import refused

from mathcomp_tests.baseline_file import reader

ARGS = ("--model=symbolic", "--limit=20", "--framings=neutral,direct-more")


def test_update_baseline_then_compare_passes_and_a_case_it_lacks_says_no_baseline(tmp_path: Path) -> None:
    path = tmp_path / "baseline.txt"
    first = run_suite(tmp_path, *ARGS, "--positions=begin", f"--update-baseline={path}")
    assert first.returncode == 0, first.output
    assert "baseline written" in first.output
    assert len([line for line in path.read_text().splitlines() if line.startswith("case ")]) == 2
    second = run_suite(tmp_path, *ARGS, f"--baseline={path}")
    assert second.returncode == 0, second.output
    statuses = {c["case"]: (c["baseline"] or {}).get("status") for c in second.summary["cases"]}
    assert statuses == {
        "neutral-begin-std-one-word": "compared",
        "neutral-end-std-one-word": "no baseline",
        "direct-more-begin-std-one-word": "compared",
        "direct-more-end-std-one-word": "no baseline",
    }
    assert second.summary["baseline"]["no_baseline"] == [
        "neutral-end-std-one-word",
        "direct-more-end-std-one-word",
    ]
    assert (
        "no baseline" in second.output
        and "UserWarning: neutral-end-std-one-word: no baseline" in second.output
    )
    page = (second.run_dir / "report.html").read_text()
    assert page.count("pass (no baseline)") == 2 and page.count("has no answers for this case.") == 2
    # A run folder serves as a baseline too.
    third = run_suite(tmp_path, *ARGS, f"--baseline={second.run_dir}")
    assert third.returncode == 0, third.output
    assert third.summary["baseline"]["compared"] == 4


def test_a_baseline_that_does_not_fit_stops_the_run_before_any_case(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.txt"
    assert run_suite(tmp_path, *ARGS, f"--update-baseline={path}").returncode == 0
    reports = tmp_path / "reports"
    before = set(reports.iterdir())
    other = refused(pytester, tmp_path, "--model=symbolic", "--limit=10", f"--baseline={path}")
    assert other.returncode == 4, other.output
    assert (
        f"baseline {path} does not fit this run: other scenarios (20 in the baseline, 10 in the run"
        in other.output
    )
    assert set(reports.iterdir()) == before  # no run folder: nothing ran
    missing = refused(pytester, tmp_path, *ARGS, f"--baseline={tmp_path / 'gone.txt'}")
    assert missing.returncode == 4 and "gone.txt: no such file or run folder" in missing.output
    text = path.read_text()
    sha = next(line for line in text.splitlines() if line.startswith("dataset-sha256:"))
    path.write_text(text.replace(sha, "dataset-sha256: " + "0" * 64))
    changed = refused(pytester, tmp_path, *ARGS, f"--baseline={path}")
    assert changed.returncode == 4 and "another dataset" in changed.output


def test_a_model_worse_than_its_baseline_fails_with_the_paired_message(tmp_path: Path) -> None:
    """The demo model against the always-right symbolic reference: every label's DirErr rose."""
    path = tmp_path / "baseline.txt"
    assert run_suite(tmp_path, *ARGS, "--positions=begin", f"--update-baseline={path}").returncode == 0
    run = run_suite(
        tmp_path, "--limit=20", "--framings=direct-more", "--positions=begin", f"--baseline={path}"
    )
    assert run.returncode == 1, run.output
    assert (
        "rose over the baseline" in run.output
        and "against the baseline symbolic (exact McNemar" in run.output
    )
    case = run.summary["cases"][0]
    rose = [y for y, change in case["baseline"]["changes"].items() if change["breach"]]
    assert rose, case["baseline"]["changes"]
    for y in rose:
        change = case["baseline"]["changes"][y]
        assert len(change["rose_scenarios"]) == change["rose"] > 0
        shown = ", ".join(i["scenario"] for i in change["rose_examples"])
        assert (
            f"DirErr({y}) rose on {change['rose']} items newly answered {y}, e.g. scenarios {shown}:"
            in run.output
        )
        for item in change["rose_examples"]:
            assert item["gold"] != y != item["baseline"] and item["candidate"] == y, item
            line = f"scenario {item['scenario']}: gold {item['gold']}, baseline {item['baseline']} -> now {y}"
            assert line in run.output
    assert [f"DirErr({y}) rise" for y in rose] == [b for b in case["breaches"] if b.endswith(" rise")]
    assert json.loads(json.dumps(run.summary["baseline"]))["rises"]


def test_baseline_model_runs_the_base_model_on_the_same_prompts_in_the_same_run(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    run = run_suite(
        tmp_path, "--limit=20", "--framings=direct-more", "--positions=begin", "--baseline-model=symbolic"
    )
    assert run.returncode == 1, run.output
    assert "against the baseline symbolic (exact McNemar, one-sided, level 0.05)" in run.output
    assert run.summary["baseline"]["model"] == "symbolic" and run.summary["baseline"]["source"] is None
    both = refused(pytester, tmp_path, *ARGS, "--baseline-model=symbolic", f"--baseline={tmp_path}")
    assert both.returncode == 4 and "give --baseline or --baseline-model, not both" in both.output


def test_holm_uses_alpha_over_m_per_case_and_the_full_step_down_at_the_end(tmp_path: Path) -> None:
    from mathcomp_tests.run.comparison import holm_failures

    def case(name: str, p: float, difference: float, breach: bool) -> dict[str, object]:
        change = {"difference": difference, "p_value": p, "max_increase": 0.05, "breach": breach}
        return {"case": name, "baseline": {"status": "compared", "changes": {"more": change}}}

    # m = 3: per-case level 0.0167; Holm then rejects 0.02 (< 0.05/2) and 0.03 (< 0.05/1) as well.
    cases = [case("a", 0.001, 0.2, True), case("b", 0.02, 0.2, False), case("c", 0.03, 0.01, False)]
    assert holm_failures(cases) == ["b: DirErr(more) rise"]
    assert [c["baseline"]["changes"]["more"]["holm_significant"] for c in cases] == [True, True, True]  # type: ignore[index]
    run = run_suite(
        tmp_path,
        "--limit=60",
        "--framings=direct-more",
        "--positions=begin",
        "--baseline-model=symbolic",
        "--holm",
    )
    # m = 1 case x 3 labels: each test at 0.05 / 3; the rise of DirErr(more) (p about 1e-7) still fails.
    assert run.returncode == 1, run.output
    assert "exact McNemar, one-sided, level 0.0166667" in run.output and run.summary["baseline"]["holm"] is True
    assert "; Holm over 3 tests, each at level 0.017" in run.output  # --holm is echoed at the end


# Generated cases and the model a baseline records.


GENERATED_ARGS = (*ARGS, "--positions=begin", "--limit=5", "--generated=6", "--hypothesis-seed=3")


def test_generated_cases_are_written_compared_and_must_be_drawn_alike(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    path = tmp_path / "baseline.txt"
    first = run_suite(tmp_path, *GENERATED_ARGS, f"--update-baseline={path}", generated=True)
    assert first.returncode == 0, first.output
    assert "baseline written: " in first.output and "(2 cases, 2 generated cases)" in first.output
    written = reader.load(path)
    assert written.generated is not None and written.generated.options == "--generated=6 --hypothesis-seed=3"
    assert sorted(written.cases) == [
        "direct-more-begin-std-one-word",
        "generated:direct-more-begin-std-one-word",
        "generated:neutral-begin-std-one-word",
        "neutral-begin-std-one-word",
    ]
    again = run_suite(tmp_path, *GENERATED_ARGS, f"--baseline={path}", generated=True)
    assert again.returncode == 0, again.output
    summary = again.summary
    assert (summary["cases_run"], summary["cases_failed"], summary["baseline"]["compared"]) == (4, 0, 4)
    assert [c["case"] for c in summary["generated_cases"]] == [
        "generated:neutral-begin-std-one-word",
        "generated:direct-more-begin-std-one-word",
    ]
    assert all(c["baseline"]["status"] == "compared" for c in summary["generated_cases"])
    assert summary["generated"]["seed"] == 3 and summary["generated"]["count"] == 6
    assert "generated:direct-more-begin-std-one-word " in again.output
    assert (
        "baseline symbolic: 4 cases compared, 0 rises, largest change +0.0 points (no DirErr changed)"
        in again.output
    )
    # The run folder serves as a baseline for the generated cases too.
    folder = run_suite(tmp_path, *GENERATED_ARGS, f"--baseline={again.run_dir}", generated=True)
    assert folder.returncode == 0 and folder.summary["baseline"]["compared"] == 4, folder.output
    reports = set((tmp_path / "reports").iterdir())
    other = refused(
        pytester, tmp_path, *GENERATED_ARGS, "--hypothesis-seed=4", f"--baseline={path}", generated=True
    )
    assert other.returncode == 4, other.output
    assert (
        f"baseline {path} does not fit this run's generated cases (test_generated): drawn with --generated=6 "
        "--hypothesis-seed=3 there, --generated=6 --hypothesis-seed=4 here" in other.output
    )
    assert set((tmp_path / "reports").iterdir()) == reports  # no run folder left behind
    fewer = refused(
        pytester, tmp_path, *GENERATED_ARGS, "--generated=5", f"--baseline={path}", generated=True
    )
    assert fewer.returncode == 4 and "--generated=5 --hypothesis-seed=3 here" in fewer.output
    # Without test_generated, its draw does not matter.
    fixed = run_suite(tmp_path, *GENERATED_ARGS, "--generated=5", f"--baseline={path}")
    assert fixed.returncode == 0, fixed.output


def test_a_failing_generated_case_prints_its_explanation_not_a_traceback(tmp_path: Path) -> None:
    """The demo model against the always-right reference's answers on the same generated scenarios."""
    path = tmp_path / "baseline.txt"
    args = (
        "--framings=direct-more",
        "--positions=begin",
        "--limit=5",
        "--generated=30",
        "-k",
        "test_generated",
    )
    assert (
        run_suite(tmp_path, "--model=symbolic", *args, f"--update-baseline={path}", generated=True).returncode
        == 0
    )
    run = run_suite(tmp_path, *args, f"--baseline={path}", generated=True)
    assert run.returncode == 1, run.output
    failure = run.output.split("_ test_generated[direct-more-begin-std-one-word] _")[1]
    assert failure.lstrip("_\n").startswith(
        "direct-more-begin-std-one-word on hf:fixtures/models/mathcomp-tiny:"
    )
    assert "rose over the baseline" in failure and "against the baseline symbolic" in failure
    assert "CaseResult(" not in run.output and "assert " not in failure and "Traceback" not in run.output
    (case,) = run.summary["generated_cases"]
    assert case["case"] == "generated:direct-more-begin-std-one-word" and not case["passed"]
    assert (run.summary["cases_run"], run.summary["cases_failed"]) == (1, 1)


def test_a_baseline_folder_cut_at_a_lines_end_is_refused_as_diff_refuses_it(tmp_path: Path) -> None:
    """One run-folder reader (run_folder.py): a results.jsonl missing its last record was accepted by
    --baseline (compared on the items left) and refused by `mathcomp diff`; both now name the case."""
    selection = ("--model=symbolic", "--limit=4", "--framings=neutral", "--positions=end")
    base = run_suite(tmp_path / "base", *selection)
    assert base.returncode == 0, base.output[-1500:]
    cut = tmp_path / "cut-base"
    shutil.copytree(base.run_dir, cut)
    lines = (cut / "results.jsonl").read_text().splitlines(keepends=True)
    (cut / "results.jsonl").write_text("".join(lines[:-1]))
    refused = run_suite(tmp_path / "run", *selection, f"--baseline={cut}")
    said = "case neutral-end-std-one-word answered 3 of the 4 scenarios its summary.json lists"
    assert refused.returncode == 4 and said in refused.output, refused.output[-1500:]
    diff = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "diff", str(cut), str(base.run_dir)],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert diff.returncode == 1 and said in diff.stderr, diff.stderr  # damaged input, as diff exits for it
