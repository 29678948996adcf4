"""`python -m mathcomp_tests init`: the starter files of a repository that installs the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mathcomp_tests import cli, init
from mathcomp_tests.backends.models import named
from mathcomp_tests.config import thresholds
from mathcomp_tests.paths import default_thresholds

WRITTEN = ("thresholds.toml", "mathcomp-baseline/README.md", ".github/workflows/mathcomp.yml")


def run_init(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "init", *args], capture_output=True, text=True, timeout=60
    )


def test_init_writes_the_starter_files_and_prints_the_two_commands(tmp_path: Path) -> None:
    proc = run_init(str(tmp_path), "--model=hf:./my-finetune")
    assert proc.returncode == 0, proc.stderr
    for rel in WRITTEN:
        assert (tmp_path / rel).is_file()
    assert proc.stdout.splitlines()[-2:] == [
        "  pytest --pyargs mathcomp_tests.suite",
        "  pytest --pyargs mathcomp_tests.suite --model=hf:./my-finetune",
    ]


def test_the_starter_thresholds_are_the_packaged_ceilings_with_an_example_for_their_model(
    tmp_path: Path,
) -> None:
    init.init(tmp_path, "openai/their-model")
    starter = thresholds.load(tmp_path / "thresholds.toml", named)
    packaged = thresholds.load(default_thresholds(), named)
    assert starter.data == packaged.data
    assert '# [model."openai/their-model"]' in (tmp_path / "thresholds.toml").read_text()


def test_the_ci_example_is_valid_yaml_running_their_model(tmp_path: Path) -> None:
    init.init(tmp_path, "openai/their-model")
    workflow = yaml.safe_load((tmp_path / ".github/workflows/mathcomp.yml").read_text())
    commands = "\n".join(step.get("run", "") for step in workflow["jobs"]["framing-bias"]["steps"])
    assert 'exec pytest --pyargs mathcomp_tests.suite --model=openai/their-model "${baseline[@]}"' in commands


def test_init_refuses_to_overwrite_and_writes_nothing_without_force(tmp_path: Path) -> None:
    (tmp_path / "thresholds.toml").write_text("# theirs\n")
    proc = run_init(str(tmp_path))
    assert proc.returncode == 1
    assert (
        f"{tmp_path / 'thresholds.toml'}: already there; nothing written (--force overwrites)" in proc.stderr
    )
    assert (tmp_path / "thresholds.toml").read_text() == "# theirs\n"
    assert not (tmp_path / "mathcomp-baseline").exists() and not (tmp_path / ".github").exists()


def test_force_overwrites(tmp_path: Path) -> None:
    (tmp_path / "thresholds.toml").write_text("# theirs\n")
    assert run_init(str(tmp_path), "--force").returncode == 0
    assert (tmp_path / "thresholds.toml").read_text().startswith("# Ceilings for the MathComp suite")


def test_init_defaults_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init"]) == 0
    assert (tmp_path / "thresholds.toml").is_file()
