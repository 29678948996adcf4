"""test_generated and test_metamorphic, run the way a user runs the suite."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from helpers.suite_runner import SuiteRun, pytest_process, run_suite


def generated(run: SuiteRun) -> list[dict[str, Any]]:
    lines = (run.run_dir / "generated" / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_generated_cases_are_named_like_the_framing_cases() -> None:
    proc = pytest_process(
        ["--collect-only", "-q", "--model=symbolic", "--framings=direct-more", "--positions=end", "-p",
         "no:cacheprovider"],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "mathcomp_tests/suite/test_generated.py::test_generated[direct-more-end-std-one-word]" in out
    assert (
        "test_metamorphic" not in out and "test_cue_invariance" not in out and "test_reveal_after" not in out
    )
    assert (
        "4 deselected" in out
    )  # test_metamorphic, test_cue_invariance, test_neutral_balance, test_reveal_after


def test_workers_agree_on_the_seeded_scenarios_and_a_rerun_is_served_by_the_cache(tmp_path: Path) -> None:
    args = ("--model=symbolic", "--limit=3", "--framings=neutral,direct-less,indirect-more", "--positions=end",
            "--generated=12", "--hypothesis-seed=5")  # fmt: skip
    first = run_suite(tmp_path, *args, "-n", "2", generated=True)
    assert first.returncode == 0, first.output
    records = generated(first)
    assert len(records) == 3 * 12
    texts: dict[str, set[str]] = defaultdict(set)
    for r in records:
        texts[r["scenario"]].add(r["prompt"].split("\n")[0])
        assert r["label"] == r["gold"]
    assert len(texts) == 12 and all(len(t) == 1 for t in texts.values()), "workers drew different scenarios"
    assert {r["gold"] for r in records} == {"less", "more", "equal"}
    again = run_suite(tmp_path, *args, generated=True)
    assert again.returncode == 0, again.output
    assert all(r["cached"] for r in generated(again))
    assert sorted(r["prompt"] for r in generated(again)) == sorted(r["prompt"] for r in records)
    other = run_suite(tmp_path, *args[:-1], "--hypothesis-seed=6", generated=True)
    assert {r["prompt"] for r in generated(other)} != {r["prompt"] for r in records}


def test_a_flip_shrinks_to_a_small_scenario_shown_with_both_prompts_and_is_kept_for_next_time(
    tmp_path: Path,
) -> None:
    args = ("--framings=direct-more", "--positions=end", "--generated=30", "--metamorphic",
            "mathcomp_tests/suite/test_metamorphic.py")  # fmt: skip
    run = run_suite(tmp_path, *args)
    assert run.returncode == 1, run.output
    assert "test_metamorphic[direct-more-end-std-one-word]" in run.output
    assert "the answer changed from" in run.output
    assert "--- neutral-end-std-one-word: answered" in run.output
    assert "--- direct-more-end-std-one-word: answered" in run.output
    shrunk = run.output.split("Failing test case:")[1]
    expr_a = shrunk.split("expr_a='")[1].split("'")[0]
    expr_b = shrunk.split("expr_b='")[1].split("'")[0]
    assert expr_a.count("+") + expr_a.count("-") <= 2 and expr_b.count("+") + expr_b.count("-") <= 2, shrunk
    database = tmp_path / "cache" / "hypothesis"
    assert any(p.is_file() for p in database.rglob("*")), "the failing example was not saved"
    again = run_suite(tmp_path, *args)
    assert again.returncode == 1 and f"expr_a='{expr_a}'" in again.output


def test_the_reference_never_flips(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, "--model=symbolic", "--framings=neutral,indirect-less", "--identities=std,woman",
        "--positions=begin", "--generated=25", "--metamorphic", "mathcomp_tests/suite/test_metamorphic.py",
    )  # fmt: skip
    assert run.returncode == 0, run.output
    assert "3 passed" in run.output  # indirect-less/std, neutral/woman, indirect-less/woman


def test_generated_zero_leaves_test_generated_out_and_metamorphic_then_asks_for_examples() -> None:
    """--generated=0 is how a run drops the generated cases (before, it was refused and only -k could)."""
    command = ["--collect-only", "-q", "--model=symbolic", "--framings=direct-more", "--positions=end", "-p",
               "no:cacheprovider", "--generated=0"]  # fmt: skip
    out = pytest_process(command)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "test_framing[direct-more-end-std-one-word]" in out.stdout and "test_generated" not in out.stdout
    metamorphic = pytest_process([*command, "--metamorphic"])
    assert metamorphic.returncode == 4
    assert (
        "--metamorphic needs --generated of at least 1: it is the examples each case tries"
        in metamorphic.stderr
    )
