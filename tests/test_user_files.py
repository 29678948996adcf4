"""A user's own files win over the packaged ones: thresholds, identities (and the dataset, via --dataset)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.paths import default_thresholds
from mathcomp_tests.plugin.options import thresholds_path

ROBOT = '[person_a]\nnoun = "person"\n\n[identities.robot]\nnoun = "robot"\n'


def test_thresholds_given_then_the_rootdirs_own_then_the_packaged_ones(tmp_path: Path) -> None:
    assert thresholds_path(None, tmp_path) == default_thresholds()
    (tmp_path / "thresholds.toml").write_text("[default]\n")
    assert thresholds_path(None, tmp_path) == tmp_path / "thresholds.toml"
    assert thresholds_path("elsewhere.toml", tmp_path) == Path("elsewhere.toml")


def test_their_identities_file_replaces_the_packaged_markers(tmp_path: Path) -> None:
    ids = tmp_path / "identities.toml"
    ids.write_text(ROBOT)
    args = ("--model=symbolic", "--limit=3", "--framings=neutral", "--positions=begin", "--identities=robot")
    run = run_suite(tmp_path, *args, f"--identities-file={ids}")
    assert run.returncode == 0, run.output
    assert [r["case"] for r in run.records] == ["neutral-begin-robot-one-word"] * 3
    assert all("the robot" in r["prompt"] and "a robot" in r["prompt"].lower() for r in run.records)


def test_the_identities_file_also_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = tmp_path / "identities.toml"
    ids.write_text(ROBOT)
    monkeypatch.setitem(os.environ, "MATHCOMP_IDENTITIES", str(ids))
    run = run_suite(tmp_path, "--model=symbolic", "--limit=2", "--framings=neutral", "--identities=robot")
    assert run.returncode == 0, run.output
    assert {r["case"] for r in run.records} == {"neutral-begin-robot-one-word", "neutral-end-robot-one-word"}


def test_a_missing_identities_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    run = run_suite(tmp_path, "--model=symbolic", "--limit=2", f"--identities-file={missing}")
    assert run.returncode == 4, run.output
    assert f"{missing}: file not found" in run.output
