"""What a project's pytest_mathcomp_check hook returns is checked: a bare string (each character became a
failure), a dict (each key did), a Check whose value is text or NaN (a case error that named nothing, or a
NaN that is never worse than the base) stop the run in one line naming the hook and what it returned."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers.suite_runner import pytest_process

from mathcomp_tests import Check, owncheck


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        ("DirErr rose", "returned str 'DirErr rose'; expected a list of failures"),
        ({"DirErr rose": 0.2}, "returned dict {'DirErr rose': 0.2}; expected a list of failures"),
        ([Check("rose", value="abc")], "returned Check('rose') with value=str 'abc'; expected a finite number"),  # type: ignore[arg-type]
        ([Check("rose", value=math.nan)], "returned Check('rose') with value=float nan; expected a finite number"),
        ([Check("rose", value=True)], "returned Check('rose') with value=bool True"),
        (["fine", 3], "returned a failure int 3 in its list"),
    ],
)
def test_a_return_that_is_no_list_of_failures_is_named(returned: object, said: str) -> None:
    problem = owncheck.problem(returned)
    assert problem is not None and problem.startswith(said), problem


@pytest.mark.parametrize("returned", [None, [], (), ["a line"], [Check("rose", value=0.2), "a line"]])
def test_a_list_of_lines_and_checks_is_fine(returned: object) -> None:
    assert owncheck.problem(returned) is None


HOOK = '''
import pytest
from mathcomp_tests import Check


@pytest.hookimpl(optionalhook=True)
def pytest_mathcomp_check(case, scores, neutral):
    return {returned}
'''


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        ('"DirErr rose"', "returned str 'DirErr rose'; expected a list of failures"),
        ('[Check("gap", value=float("nan"))]', "returned Check('gap') with value=float nan"),
    ],
)
def test_the_run_stops_in_one_line_naming_the_hook(tmp_path: Path, returned: str, said: str) -> None:
    repo = tmp_path / "their-repo"
    repo.mkdir()
    (repo / "conftest.py").write_text(HOOK.format(returned=returned))
    (repo / "thresholds.toml").write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    args = ["-p", "no:cacheprovider", "--pyargs", "mathcomp_tests.suite", f"--reports-dir={repo / 'reports'}"]
    args += ["--no-cache", "--model=symbolic", "--limit=6", "--framings=neutral", "--positions=end"]
    done = pytest_process([*args, "--generated=0"], cwd=repo)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output[-3000:]
    lines = [line for line in output.splitlines() if "pytest_mathcomp_check in " in line]
    assert len(lines) == 1 and said in lines[0] and str(repo / "conftest.py") in lines[0], output[-3000:]
    assert "Traceback" not in output
