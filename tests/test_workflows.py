"""Both workflows pass actionlint (the dev extra ships its binary): the nightly job of this repository and
the one `mathcomp init` writes into a user's repository, with their model filled in."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.suite_runner import REPO

from mathcomp_tests import init


def _actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    assert found, "actionlint is missing: install the dev extra (pip install -e '.[dev]' -c constraints.txt)"
    return found


def _lint(workflow: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_actionlint(), "-shellcheck=", "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _starter(folder: Path) -> Path:
    init.init(folder, "hf:Qwen/Qwen2.5-3B-Instruct")
    return folder / ".github" / "workflows" / "mathcomp.yml"


@pytest.mark.parametrize("which", ["nightly", "starter"])
def test_the_workflow_passes_actionlint(tmp_path: Path, which: str) -> None:
    workflow = REPO / ".github/workflows/nightly.yml" if which == "nightly" else _starter(tmp_path)
    linted = _lint(workflow)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    """The check above can fail: an unknown context in an expression is an error."""
    broken = tmp_path / "broken.yml"
    text = (REPO / ".github/workflows/nightly.yml").read_text()
    broken.write_text(text.replace("${{ matrix.model }}", "${{ matrix.modle }}", 1))
    linted = _lint(broken)
    assert linted.returncode == 1 and "modle" in linted.stdout, linted.stdout + linted.stderr
