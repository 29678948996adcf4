"""A sharded night (the repository variable MATHCOMP_SHARDS): the nightly workflow's own commands run as the
workflow runs them (tests/helpers/fake_ci.py), on the symbolic backend. Three shard legs, then the merge
job, then the history job: the branch gets one record for the night, the merged run's, with the verdict of
the same selection run whole; a shard leg killed makes the night INCOMPLETE, naming the missing shard; a
MATHCOMP_SHARDS that is no shard count fails the first job with one error line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.fake_ci import FakeCI, Step
from helpers.nightly_ci import (
    RUN,
    SELECTION,
    WORKFLOW,
    checkout,
    history_env,
    kept,
    night_ci,
    origin_repo,
    said,
    suite_env,
)
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import summary_format
from mathcomp_tests.verdict.of_run import verdict

pytestmark = pytest.mark.xdist_group("nightly-shards")

MODEL = "symbolic"
SHARDS = 3
MERGE = "Merge the shards and gate the night"


def _record(folder: Path) -> dict[str, Any]:
    """The one night record under ``folder``."""
    (record,) = folder.iterdir()
    return summary_format.load(record)


def _sharded_night(
    tmp: Path, baseline: Path, night: int, origin: Path, killed: int | None = None
) -> dict[str, list[Step]]:
    """Every leg of the night (shard ``killed``'s run step killed as it starts, as a runner lost or out of
    memory ends it; run last: the fake CI runs jobs one after another, and GitHub runs a matrix's legs
    whatever the others did), then the merge job, then the history job."""
    ci = night_ci(tmp, MODEL, night, shards=str(SHARDS))
    jobs: dict[str, list[Step]] = {}
    for shard in sorted(range(1, SHARDS + 1), key=lambda i: i == killed):
        ci.context |= {"matrix.shard": str(shard), "strategy.job-index": str(shard - 1)}
        leg = tmp / f"night-{night}" / f"leg-{shard}"  # a machine of its own
        env = {"BASELINE": str(baseline), "SUITE_ARGS": SELECTION, "REPORTS": str(leg / "reports"),
               "CACHE_DIR": str(leg / "answers"), "RECORD": str(leg / "record")}  # fmt: skip
        during = {RUN: lambda proc: proc.kill()} if shard == killed else None
        jobs[f"suite-{shard}"] = ci.run("suite", env, during)
    ci.context["strategy.job-index"] = "0"
    folder = tmp / f"night-{night}"
    merge_env = {
        "BASELINE": str(baseline),
        "SHARD_RUNS": str(folder / "shard-runs"),
        "MERGED": str(folder / "merged"),
        "RECORD": str(folder / "record"),
    }
    jobs["merge"] = ci.run("merge", merge_env)
    jobs["history"] = ci.run("history", history_env(tmp, night), cwd=checkout(tmp, origin, night))
    jobs["summary"] = [
        Step("job summary", None, (ci.artifacts.parent / "merge.github_step_summary").read_text())
    ]
    return jobs


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The selection as one night unsharded (night 0), then two sharded nights: all three shards (night 1),
    and shard 2 killed (night 2); the history branch carried from night 1 to night 2."""
    tmp = tmp_path_factory.mktemp("sharded-nights")
    baseline = tmp / "baseline.txt"
    made = run_suite(tmp / "base", f"--model={MODEL}", *SELECTION.split(), f"--update-baseline={baseline}")
    assert baseline.exists(), made.output
    whole = night_ci(tmp, MODEL, 0).run("suite", suite_env(tmp, baseline, SELECTION, night=0))
    origin = origin_repo(tmp)
    return {
        "tmp": tmp,
        "origin": origin,
        "whole": whole,
        "complete": _sharded_night(tmp, baseline, 1, origin),
        "killed": _sharded_night(tmp, baseline, 2, origin, killed=2),
    }


def _step(steps: list[Step], name: str) -> Step:
    return next(s for s in steps if s.name.startswith(name))


def test_the_shards_merge_into_one_record_with_the_unsharded_nights_verdict(nights: dict[str, Any]) -> None:
    tmp, night = nights["tmp"], nights["complete"]
    for shard in range(1, SHARDS + 1):
        leg = night[f"suite-{shard}"]
        run = _step(leg, RUN)
        assert run.returncode == 0 and f"shard {shard} of {SHARDS}: merge the shards to gate" in run.output, (
            said(leg)
        )
        assert _step(leg, "Keep the night's record").output == "skipped", "a shard keeps no record"
    assert all(s.returncode in (0, None) for s in night["merge"]), said(night["merge"])
    assert _step(night["merge"], MERGE).returncode == 0
    whole = _record(tmp / "night-0" / "record")
    merged = _record(tmp / "night-1" / "record")
    assert [m["index"] for m in merged["merged_from"]] == [1, 2, 3] and merged["status"] != "incomplete"
    assert verdict(merged).line == verdict(whole).line
    assert [(c["case"], c["passed"]) for c in merged["cases"]] == [
        (c["case"], c["passed"]) for c in whole["cases"]
    ]
    assert merged["baseline"]["compared"] == whole["baseline"]["compared"] > 0
    assert night["summary"][0].output.startswith(f"## MathComp: {verdict(merged).line}")
    history = night["history"]
    assert [s.returncode for s in history if s.returncode is not None] == [0, 0, 0, 0], said(history)
    assert merged["run_id"] in (tmp / "night-1" / "history.txt").read_text()


def test_the_branch_gets_one_record_a_night_and_a_killed_shard_makes_it_incomplete(
    nights: dict[str, Any],
) -> None:
    tmp, night = nights["tmp"], nights["killed"]
    assert _step(night["suite-2"], RUN).returncode != 0
    assert (
        "shard 2 of 3 wrote no run folder"
        in _step(night["suite-2"], "Collect this shard's run folder").output
    )
    merge = _step(night["merge"], MERGE)
    assert merge.returncode == 1 and "INCOMPLETE" in merge.output, said(night["merge"])
    record = _record(tmp / "night-2" / "record")
    assert record["status"] == "incomplete" and "shard 2 of 3 missing" in record["incomplete_reasons"]
    assert night["summary"][0].output.startswith("## MathComp: INCOMPLETE")
    first = _record(tmp / "night-1" / "record")["run_id"]
    assert kept(nights["origin"]) == {first, record["run_id"]}, "one record per night, the merged run's"
    table = (tmp / "night-2" / "history.txt").read_text()
    assert any("INCOMPLETE" in row and "shard 2 of 3 missing" in row for row in table.splitlines()), table


def test_the_suite_runs_a_leg_per_model_and_shard_and_the_merge_one_per_model() -> None:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    assert jobs["suite"]["needs"] == "shards"
    assert jobs["suite"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.shards.outputs.list) }}"
    assert jobs["merge"]["strategy"]["matrix"]["model"] == jobs["suite"]["strategy"]["matrix"]["model"]
    assert jobs["history"]["needs"] == ["suite", "merge"] and jobs["history"]["if"] == "always()"


@pytest.mark.parametrize(("value", "shards"), [("1", [1]), ("3", [1, 2, 3]), ("64", list(range(1, 65)))])
def test_the_shard_count_becomes_the_matrix(tmp_path: Path, value: str, shards: list[int]) -> None:
    ci = night_ci(tmp_path, MODEL, shards=value)
    assert json.loads(ci.context["needs.shards.outputs.list"]) == shards
    assert ci.context["needs.shards.outputs.count"] == value


def test_no_variable_is_one_shard(tmp_path: Path) -> None:
    ci = night_ci(tmp_path, MODEL)
    assert (ci.context["needs.shards.outputs.list"], ci.context["needs.shards.outputs.count"]) == ("[1]", "1")


@pytest.mark.parametrize("value", ["0", "65", "100", "three", "2.5", "-1", " 3", "03"])
def test_a_bad_shard_count_fails_the_first_job_with_one_error(tmp_path: Path, value: str) -> None:
    ci = FakeCI(WORKFLOW, REPO, tmp_path / "cache", tmp_path / "artifacts", {})
    ci.context["vars.MATHCOMP_SHARDS"] = value
    (step,) = ci.run("shards", {})
    assert step.returncode == 1
    assert step.output.splitlines() == [
        f"::error::the repository variable MATHCOMP_SHARDS is '{value}': expected a whole number from 1 to 64"
    ]
    assert ci.context["needs.shards.result"] == "failure"
    assert ci.run("suite", {})[0].output == "skipped: the job's condition does not hold"
