"""The merged run is the suite's own pytest session over the shards' answers, so what every run does, it
does: a project's own checks (its conftest.py) fail it as they fail the whole run, and shards narrowed by
`-k` merge into the narrowed whole run. (Before, the merge rescored the cases itself: its own checks were
not run, PASSED where the whole run failed, and `-k`-narrowed shards merged INCOMPLETE.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.merge_cli import finished_shards, merge
from helpers.suite_runner import REPO, pytest_process, run_suite

pytestmark = pytest.mark.xdist_group("merge")

SELECTION = ("--model=symbolic", "--limit=4", "--framings=neutral,direct-more", "--positions=end")
OWN_CHECK = """import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_mathcomp_check(case, scores, neutral):
    if case.condition.framing == "neutral":
        return ["the neutral framing is held to a check of this project's own (conftest.py)"]
    return []
"""


def _comparable(run_dir: Path) -> dict[str, object]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {k: v for k, v in summary.items() if k not in ("run_id", "merged_from", "shard")}


def _project(root: Path) -> Path:
    """A user's project: its own check in conftest.py, and the repository's ceilings."""
    root.mkdir(parents=True)
    (root / "conftest.py").write_text(OWN_CHECK)
    (root / "thresholds.toml").write_text((REPO / "thresholds.toml").read_text())
    return root


def _suite(project: Path, name: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`pytest --pyargs mathcomp_tests.suite ARGS` in ``project``, as its users run it: the run and its folder."""
    reports = project / name
    command = ["-p", "no:cacheprovider", "--pyargs", "mathcomp_tests.suite", f"--reports-dir={reports}"]
    done = pytest_process([*command, "--no-cache", "--generated=0", *SELECTION, *args], cwd=project)
    return done, (reports / "latest").resolve()


def test_a_projects_own_check_fails_the_merged_run_as_it_fails_the_whole(tmp_path: Path) -> None:
    project = _project(tmp_path / "their-project")
    whole, whole_dir = _suite(project, "whole")
    assert whole.returncode == 1 and "held to a check of this project's own" in whole.stdout, whole.stdout[
        -2000:
    ]
    shards = [_suite(project, f"shard-{i}", f"--shard={i}/2") for i in (1, 2)]
    assert all(done.returncode == 0 for done, _ in shards), [done.stdout[-1500:] for done, _ in shards]
    out = project / "merged"
    merged = merge(*(folder for _, folder in shards), "--out", out, cwd=project)
    assert merged.returncode == whole.returncode, merged.stdout[-3000:] + merged.stderr
    assert "MathComp merge: FAILED: 1 of 2 cases" in merged.stdout
    assert "held to a check of this project's own" in merged.stdout
    assert _comparable(out) == _comparable(whole_dir)


def test_shards_narrowed_by_k_merge_into_the_narrowed_whole_run(tmp_path: Path) -> None:
    whole = run_suite(tmp_path / "whole", *SELECTION, "-k", "neutral")
    assert whole.returncode == 0, whole.output[-1500:]
    shards = finished_shards(tmp_path, *SELECTION, "-k", "neutral")
    out = tmp_path / "merged"
    done = merge(*shards, "--out", out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    said = "PASSED: 1 of 2 cases selected (narrowed by -k 'neutral')"
    assert f"MathComp merge: {said}" in done.stdout
    assert _comparable(out) == _comparable(whole.run_dir)
    assert json.loads((out / "summary.json").read_text())["narrowed"]["by"] == ["-k 'neutral'"]


def test_shards_narrowed_differently_make_the_merge_incomplete(tmp_path: Path) -> None:
    narrowed = run_suite(tmp_path / "shard-1", *SELECTION, "-k", "neutral", "--shard=1/2")
    whole = run_suite(tmp_path / "shard-2", *SELECTION, "--shard=2/2")
    assert narrowed.returncode == whole.returncode == 0, narrowed.output[-1500:] + whole.output[-1500:]
    done = merge(narrowed.run_dir, whole.run_dir, "--out", tmp_path / "merged")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    assert "selected other items than" in done.stdout and "-k 'neutral'" in done.stdout
    summary = json.loads((tmp_path / "merged" / "summary.json").read_text())
    assert summary["status"] == "incomplete"
