"""Run records miss nothing and say nothing twice: raised cases, repeated cases, failure messages."""

from __future__ import annotations

import json
import shutil
import struct
from collections import Counter
from pathlib import Path

from helpers.suite_runner import run_suite

TWO_CASES = ("--limit=3", "--framings=neutral,direct-more", "--positions=end")


def test_a_case_that_raised_is_in_the_summary_with_its_error(tmp_path: Path, always_more_model: Path) -> None:
    """Weights that cannot be read: the checks before the run (config, tokenizer, a whole safetensors file)
    pass, but the header names a type no loader knows, so every case raises."""
    broken = tmp_path / "broken-model"
    shutil.copytree(always_more_model, broken)
    header = json.dumps({"w": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 4]}}).encode()
    (broken / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(4))
    run = run_suite(tmp_path, f"--model=hf:{broken}", *TWO_CASES)
    assert run.returncode == 1, run.output
    summary = run.summary
    assert summary["cases_run"] == 2 and summary["cases_errored"] == 2 and summary["cases_failed"] == 0
    for case in summary["cases"]:
        assert case["scores"] is None and case["passed"] is False
        assert "cannot load the weights of" in case["error"] and "deserializing header" in case["error"]
    assert run.output.count("ERROR: ") >= 2, "the terminal table names each case that raised"
    html = (run.run_dir / "report.html").read_text()
    assert "raised" in html


def test_a_case_run_twice_in_one_run_is_recorded_once(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "-n", "2", "--dist=each", *TWO_CASES)
    assert run.returncode == 0, run.output
    assert [c["case"] for c in run.summary["cases"]] == [
        "neutral-end-std-one-word",
        "direct-more-end-std-one-word",
    ]
    assert run.summary["cases_run"] == 2
    keys = Counter((r["case"], r["scenario"]) for r in run.records)
    assert len(keys) == 6 and set(keys.values()) == {1}


def test_a_failing_case_prints_its_explanation_and_nothing_else(tmp_path: Path) -> None:
    strict = tmp_path / "strict.toml"
    strict.write_text("[default]\ndir_err = 0.0\ninvalid_rate = 0.0\nerror_rate = 0.0\n")
    run = run_suite(
        tmp_path, f"--thresholds={strict}", "--limit=20", "--framings=direct-more", "--positions=end"
    )
    assert run.returncode == 1, run.output
    assert "direct-more-end-std-one-word on hf:fixtures/models/mathcomp-tiny:" in run.output
    assert "DirErr(more ) = " in run.output and "three wrong items:" in run.output
    assert "CaseResult(" not in run.output and "where False" not in run.output and "assert" not in run.output
    header = next(line for line in run.output.splitlines() if line.startswith("case ") and "errors" in line)
    assert header.split() == ["case", "less", "more", "equal", "acc", "invalid", "errors"]
