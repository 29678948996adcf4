"""One verdict for every way a run ends: pytest's exit status, summary.json's status, the verdict line
(verdict/of_run.py), the report's headline and the CI job summary's first line agree, on real sessions in a
user's project. (A failure pytest saw that no case records, such as test_metamorphic failing (here: a strict
xfail of the project's that passed), exited 1 while the summary, the report and the job summary said
PASSED.)"""

from __future__ import annotations

import json
import os
import re
from html import unescape
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, pytest_process

from mathcomp_tests.verdict.of_run import verdict

pytestmark = pytest.mark.xdist_group("exit-paths")

BASE = ("--model=symbolic", "--limit=4", "--positions=end", "--no-cache", "--generated=0")
OWN_CHECK = """import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_mathcomp_check(case, scores, neutral):
    return ["held to this project's own check"] if case.condition.framing == "direct-more" else []
"""
STRICT_XFAIL = """import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name.startswith("test_metamorphic"):
            item.add_marker(pytest.mark.xfail(strict=True, reason="this project expects it to fail"))
"""
PATHS = {
    # name: (the project's conftest.py, pytest arguments, exit status, the verdict line's start)
    "passed": ("", ("--framings=neutral",), 0, "PASSED: all 1 cases"),
    "a case fails": (OWN_CHECK, ("--framings=neutral,direct-more",), 1, "FAILED: 1 of 2 cases"),
    "narrowed": ("", ("--framings=neutral,direct-more", "-k", "neutral"), 0, "PASSED: 1 of 2 cases selected"),
    "stopped at the first failure": (
        OWN_CHECK, ("--framings=direct-more,neutral", "-x"), 1, "INCOMPLETE (the run stopped early"
    ),
    "a shard": (OWN_CHECK, ("--framings=neutral,direct-more", "--shard=1/2"), 0, "shard 1 of 2: merge the shards"),
    "a test no case records fails": (
        STRICT_XFAIL,
        ("--framings=neutral,direct-more", "--metamorphic", "--generated=1"),
        1,
        "FAILED: 0 of 4 cases and 1 other checks",
    ),
}  # fmt: skip


@pytest.mark.parametrize("path", list(PATHS))
def test_every_exit_path_says_one_verdict(path: str, tmp_path: Path) -> None:
    conftest, args, status, said = PATHS[path]
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "thresholds.toml").write_text((REPO / "thresholds.toml").read_text())
    page = tmp_path / "job-summary.md"
    command = [
        "-p",
        "no:cacheprovider",
        "--pyargs",
        "mathcomp_tests.suite",
        f"--reports-dir={tmp_path / 'r'}",
    ]
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(page)}
    done = pytest_process([*command, *BASE, *args], cwd=tmp_path, env=env)
    run_dir = (tmp_path / "r" / "latest").resolve()
    summary = json.loads((run_dir / "summary.json").read_text())
    one = verdict(summary)
    assert done.returncode == status == one.exit_status, done.stdout[-3000:]
    assert one.line.startswith(said), one.line
    assert (summary["status"] == "incomplete") == one.line.startswith("INCOMPLETE")
    headlines = [unescape(h) for h in re.findall(r"<h2>(.*?)</h2>", (run_dir / "report.html").read_text())]
    assert any(one.line.endswith(h) for h in headlines), headlines
    assert page.read_text().startswith(f"## MathComp: {one.line}"), page.read_text()[:300]
