"""A project's own checks through the pytest_mathcomp_check hook: the top-level conftest.py is the worked
example, `mathcomp init` writes the same file, and a check that finds something fails the case."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.suite_runner import REPO, pytest_process

from mathcomp_tests.cli import main
from mathcomp_tests.paths import PACKAGE

DEMO = REPO / "fixtures" / "models" / "mathcomp-tiny"


def test_init_writes_the_same_conftest_as_the_projects_own(tmp_path: Path) -> None:
    assert (PACKAGE / "starter" / "conftest.py").read_bytes() == (REPO / "conftest.py").read_bytes()
    assert main(["init", str(tmp_path), "--model=symbolic"]) == 0
    assert (tmp_path / "conftest.py").read_bytes() == (REPO / "conftest.py").read_bytes()


def _their_repo(tmp_path: Path, section: str = "") -> Path:
    """A repository of a user's: the starter conftest, and ceilings no model breaches (what fails, fails by
    the conftest's check alone), in [default] or in a section of the demonstration model's."""
    repo = tmp_path / "their-repo"
    repo.mkdir(parents=True)
    (repo / "conftest.py").write_text((REPO / "conftest.py").read_text())
    ceilings = "dir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n"
    text = f"[default]\n{ceilings}" + (f'[model."{section}"]\n{ceilings}' if section else "")
    (repo / "thresholds.toml").write_text(text)
    return repo


def _suite(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["-p", "no:cacheprovider", "--pyargs", "mathcomp_tests.suite"]
    command += [f"--reports-dir={repo / 'reports'}", f"--cache-dir={repo / 'cache'}", *args]
    return pytest_process(command, cwd=repo)


def test_the_example_check_fails_a_model_that_follows_the_cue(tmp_path: Path) -> None:
    selection = ["--limit=40", "--positions=end", "--framings=neutral,direct-more", "-k", "test_framing"]
    held = _suite(_their_repo(tmp_path / "held"), f"--model=hf:{DEMO}", *selection)
    assert held.returncode == 1, held.stdout[-3000:]
    assert "DirErr(more) under direct-more is 1.000, " in held.stdout
    assert "at most +0.10 allowed (conftest.py)" in held.stdout
    assert "1 failed, 1 passed" in held.stdout
    exempt = _suite(_their_repo(tmp_path / "exempt", f"hf:{DEMO}"), f"--model=hf:{DEMO}", *selection)
    assert exempt.returncode == 0, exempt.stdout[-3000:]
