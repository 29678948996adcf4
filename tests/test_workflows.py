"""Every workflow passes actionlint with shellcheck on (the dev extra ships both binaries): each file of this
repository's .github/workflows, and the one `mathcomp init` writes into a user's repository, with their model
and this package's version filled in; the scripts the workflows call (.github/scripts) pass shellcheck."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.suite_runner import REPO

from mathcomp_tests import init

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert found, f"{name} is missing: install the dev extra (pip install -e '.[dev]' -c constraints.txt)"
    return found


def _lint(workflow: Path) -> subprocess.CompletedProcess[str]:
    """actionlint on one file, every `run:` script checked by shellcheck (named, never looked up silently:
    actionlint skips scripts without a word when it finds no shellcheck)."""
    return subprocess.run(
        [_tool("actionlint"), f"-shellcheck={_tool('shellcheck')}", "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )


SCRIPTS = sorted((REPO / ".github" / "scripts").glob("*.sh"))
"""What the workflows' steps run from the checkout (actionlint checks the `run:` line that calls one, not
the script)."""


def _starter(folder: Path) -> Path:
    init.init(folder, "hf:Qwen/Qwen2.5-3B-Instruct")
    return folder / ".github" / "workflows" / "mathcomp.yml"


def test_there_are_workflows_to_lint() -> None:
    assert REPO / ".github/workflows/nightly.yml" in WORKFLOWS


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[w.name for w in WORKFLOWS])
def test_the_workflow_passes_actionlint(workflow: Path) -> None:
    linted = _lint(workflow)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_every_script_a_workflow_calls_is_there() -> None:
    called = {
        found
        for workflow in WORKFLOWS
        for found in re.findall(r"\.github/scripts/[\w.-]+", workflow.read_text())
    }
    assert called and called <= {str(s.relative_to(REPO)) for s in SCRIPTS}, called


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_the_workflows_scripts_pass_shellcheck(script: Path) -> None:
    checked = subprocess.run([_tool("shellcheck"), str(script)], capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_starter_workflow_passes_actionlint(tmp_path: Path) -> None:
    linted = _lint(_starter(tmp_path))
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check above can fail: an unknown context in an expression is an error."""
    broken = tmp_path / "broken.yml"
    text = (REPO / ".github/workflows/nightly.yml").read_text()
    broken.write_text(text.replace("${{ matrix.model }}", "${{ matrix.modle }}", 1))
    linted = _lint(broken)
    assert linted.returncode == 1 and "modle" in linted.stdout, linted.stdout + linted.stderr


SCRIPTED = """on: push
permissions:
  contents: read
jobs:
  night:
    runs-on: ubuntu-latest
    steps:
      - run: cp {reports}/junit.xml "$RECORD"
"""


def test_shellcheck_is_on_and_finds_an_unquoted_variable(tmp_path: Path) -> None:
    """A variable split on spaces by accident (SC2086) fails the lint, and the same script quoted passes:
    the scripts are really checked."""
    for name, reports in (("quoted", '"$REPORTS"'), ("unquoted", "$REPORTS")):
        (tmp_path / f"{name}.yml").write_text(SCRIPTED.format(reports=reports))
    quoted, unquoted = _lint(tmp_path / "quoted.yml"), _lint(tmp_path / "unquoted.yml")
    assert quoted.returncode == 0, quoted.stdout + quoted.stderr
    assert unquoted.returncode == 1 and "SC2086" in unquoted.stdout, unquoted.stdout + unquoted.stderr


def test_the_starter_installs_the_version_that_wrote_it_and_runs_where_history_spans(tmp_path: Path) -> None:
    text = _starter(tmp_path).read_text()
    assert "__MODEL__" not in text and "__VERSION__" not in text
    workflow = yaml.safe_load(text)
    installs = [
        s["run"] for s in workflow["jobs"]["framing-bias"]["steps"] if "pip install" in s.get("run", "")
    ]
    assert installs == [f'pip install "mathcomp-tests[hf]=={init.installed_version()}"']
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["push"] == {"branches": ["main"]} and "pull_request" in triggers
    assert workflow["permissions"] == {"contents": "read"}
    assert workflow["concurrency"]["group"] and workflow["jobs"]["framing-bias"]["timeout-minutes"] > 0
