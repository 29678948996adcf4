"""The nightly workflow's own commands, run here as the workflow runs them (bash, the job's environment; the
CI's cache and artifacts stood in for by folders, tests/helpers/fake_ci.py; the history branch pushed to a
real bare repository, the `origin` of each night's checkout), on the symbolic backend, the demo model, and
over three nights of a model server: one good, one whose server dies mid-run, one cancelled (as GitHub's
runner cancels a step), and as three shards merged into the night's one record. The branch must carry the
nights from one CI run to the next, history must mark the bad ones, and the site must be built."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cache_rows import cached_rows
from helpers.fake_ci import Step
from helpers.fault_server import FaultServer
from helpers.nightly_ci import (
    BRANCH,
    RUN,
    SELECTION,
    WORKFLOW,
    checkout,
    git,
    history_env,
    kept,
    night_ci,
    origin_repo,
    said,
    suite_env,
)
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import summary_format


def test_the_workflow_runs_a_matrix_of_models_on_a_chosen_runner() -> None:
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["suite"]
    assert "vars.MATHCOMP_MODELS" in job["strategy"]["matrix"]["model"]
    assert job["runs-on"] == "${{ vars.MATHCOMP_RUNNER || 'ubuntu-latest' }}"
    assert "HF_HUB_OFFLINE" not in job["env"], "hub ids download; only the demo model runs offline"


def test_one_night_runs_at_a_time_and_each_job_may_write_only_what_it_must() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["concurrency"] == {"group": "mathcomp-nightly", "cancel-in-progress": False}
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert "permissions" not in jobs["suite"]
    assert jobs["history"]["permissions"] == {"contents": "write"}
    assert jobs["pages"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "vars.MATHCOMP_PAGES == 'true'" in jobs["pages"]["if"]
    assert not any("secrets." in json.dumps(job.get("env") or {}) for job in jobs.values())


@pytest.mark.parametrize("model", ["symbolic", "hf:fixtures/models/mathcomp-tiny"])
def test_the_nightly_commands_compare_with_the_baseline_and_publish_the_report(
    tmp_path: Path, model: str
) -> None:
    baseline = tmp_path / "baseline.txt"
    made = run_suite(tmp_path / "base", *SELECTION.split(), f"--update-baseline={baseline}")  # the demo model
    assert baseline.exists(), made.output
    ci = night_ci(tmp_path, model)
    steps = ci.run("suite", suite_env(tmp_path, baseline, SELECTION))
    assert [p.returncode for p in steps if p.returncode is not None] == [0, 0, 0, 0, 0], said(steps)
    slug = model.replace(":", "_").replace("/", "_")
    artifact = ci.artifacts / f"mathcomp-report-{slug}-0"
    assert {"report.html", "summary.json", "results.jsonl", "junit.xml"} <= {
        p.name for p in artifact.iterdir()
    }
    suite = ET.parse(artifact / "junit.xml").getroot().find("testsuite")
    assert (
        suite is not None and suite.get("tests") == "4" and suite.get("failures") == "0"
    )  # 2 cases + 2 generated
    summary = json.loads((artifact / "summary.json").read_text())
    assert summary["baseline"]["compared"] == 2 and summary["baseline"]["rises"] == []
    assert summary["resolved"] == ("symbolic" if model == "symbolic" else "hf:fixtures/models/mathcomp-tiny")
    (record,) = (ci.artifacts / f"mathcomp-record-{slug}-0").iterdir()
    assert record.name == summary["run_id"] and summary_format.load(record) == summary
    # No diff.html: the baseline holds no generated cases, so the diff refuses (three_nights has one).
    assert {p.name for p in record.iterdir()} == {"summary.json.gz", "report.html.gz"}
    origin = origin_repo(tmp_path)
    history = ci.run("history", history_env(tmp_path, 1), cwd=checkout(tmp_path, origin, 1))
    assert [p.returncode for p in history if p.returncode is not None] == [0, 0, 0, 0], said(history)
    assert summary["run_id"] in (tmp_path / "night-1" / "history.txt").read_text()
    assert kept(origin) == {summary["run_id"]}
    for site in (
        tmp_path / "night-1" / "site",
        ci.artifacts / "mathcomp-site",
        ci.artifacts / "github-pages",
    ):
        assert (site / "index.html").is_file() and (site / "history.html").is_file(), site


def test_a_baseline_that_does_not_fit_fails_the_nightly_run_before_any_case(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.txt"
    made = run_suite(tmp_path / "base", "--model=symbolic", "--limit=10", f"--update-baseline={baseline}")
    assert made.returncode == 0, made.output
    steps = night_ci(tmp_path, "symbolic").run("suite", suite_env(tmp_path, baseline, SELECTION))
    run = next(s for s in steps if s.name == RUN)
    assert run.returncode == 4 and "does not fit this run: other scenarios" in run.output
    junit = tmp_path / "night-1" / "reports" / "junit.xml"
    assert not junit.exists() or "testcase" not in junit.read_text()


def test_the_committed_baseline_fits_the_default_run() -> None:
    """The nightly job compares with baseline.txt: it must still fit the bundled data and the default matrix
    (after a change to fixtures/scenarios.csv or the demo model, rewrite it with `pytest --update-baseline`)."""
    from mathcomp_tests import prompts
    from mathcomp_tests.backends.models import resolve
    from mathcomp_tests.baseline_file import reader
    from mathcomp_tests.baseline_file.format import Fingerprint, sha256_of
    from mathcomp_tests.data import datasets
    from mathcomp_tests.data.generated_draw import GENERATED_PREFIX
    from mathcomp_tests.settings import DEFAULT_MODEL, Settings, conditions

    committed = reader.load(REPO / "baseline.txt")
    spec = resolve(DEFAULT_MODEL)
    dataset = datasets.resolve(None, None, REPO / ".mathcomp-cache")
    committed.check_fits(
        Fingerprint(
            dataset=dataset.name,
            dataset_sha256=sha256_of(dataset.path),
            prompt_set=prompts.load_prompt_set(spec.prompt_set).name,
            scenarios=tuple(s.id for s in dataset.scenarios),
            cases=tuple(c.id for c in conditions(Settings())),
        )
    )
    default = {c.id for c in conditions(Settings())}
    assert set(committed.cases) == default | {GENERATED_PREFIX + case for case in default}
    assert committed.model == spec.resolved


def _after_new_answers(answers: Path, then: Callable[[subprocess.Popen[str]], None]) -> Callable[..., None]:
    """Once the running night has cached 8 answers of its own, ``then`` (stop the server, cancel the run)."""

    def wait(proc: subprocess.Popen[str]) -> None:
        before = cached_rows(answers / "responses.sqlite")  # restored from the nights before
        deadline = time.monotonic() + 120
        while cached_rows(answers / "responses.sqlite") < before + 8:
            assert proc.poll() is None, "the night ended before it was cut short"
            assert time.monotonic() < deadline, "nothing was answered"  # hang guard
            time.sleep(0.05)
        then(proc)

    return wait


MODEL = "openai/tiny"


def _served(night: int) -> list[dict[str, object]]:
    """What the server says it serves: another checkpoint each night (so each night asks anew)."""
    return [{"id": "tiny", "object": "model", "owned_by": "nightly", "root": f"checkpoint-{night}"}]


pytestmark = pytest.mark.xdist_group("nightly")
"""One worker runs this module's tests, so its module-scoped fixtures (`three_nights`) are built once."""


@pytest.fixture(scope="module")
def three_nights(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Night 1 completes; night 2's server dies mid-run; night 3 is cancelled (SIGTERM, as a CI cancels a
    job). Each night: the suite job, then the history job; the CI cache carried from night to night."""
    tmp = tmp_path_factory.mktemp("nights")
    thresholds = tmp / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    args = (
        f"--thresholds={thresholds} --framings=neutral,direct-more,direct-less --positions=end --limit=40 "
        "--max-concurrency=2 --deselect=mathcomp_tests/suite/test_generated.py"
    )
    baseline = tmp / "baseline.txt"
    with FaultServer(models=_served(0)).running() as server:
        made = run_suite(
            tmp / "base",
            f"--model={MODEL}",
            f"--api-base={server.url}",
            *args.split(),
            f"--update-baseline={baseline}",
        )
    assert made.returncode == 0 and baseline.exists(), made.output
    committed = baseline.read_bytes()
    origin = origin_repo(tmp)
    nights: list[list[Step]] = []
    for night in (1, 2, 3):
        ci = night_ci(tmp, MODEL, night)
        env = suite_env(tmp, baseline, "", night)
        answers = Path(env["CACHE_DIR"])
        with ExitStack() as stack:
            server = stack.enter_context(FaultServer(models=_served(night), latency=0.1).running())
            env["SUITE_ARGS"] = f"--model={MODEL} --api-base={server.url} {args}"
            during = {
                2: {RUN: _after_new_answers(answers, lambda proc: stack.close())},
                3: {RUN: _after_new_answers(answers, ci.cancel)},
            }.get(night)
            suite = ci.run("suite", env, during)
        history = ci.run("history", history_env(tmp, night), cwd=checkout(tmp, origin, night))
        nights.append(suite + history)
    return {"tmp": tmp, "nights": nights, "baseline": baseline, "committed": committed, "origin": origin}


def _history(nights: dict[str, Any], night: int) -> list[str]:
    text = (nights["tmp"] / f"night-{night}" / "history.txt").read_text()
    return [line for line in text.splitlines() if line[:8].isdigit()]


@pytest.mark.slow
def test_history_keeps_every_night_across_ci_runs_and_marks_the_cancelled_one(
    three_nights: dict[str, Any],
) -> None:
    runs = [next(s for s in steps if s.name == RUN) for steps in three_nights["nights"]]
    assert runs[0].returncode == 0, said(three_nights["nights"][0])
    assert runs[1].returncode != 0 and "stopped answering" in runs[1].output, runs[1].output[-3000:]
    assert runs[2].returncode != 0
    assert [len(_history(three_nights, n)) for n in (1, 2, 3)] == [1, 2, 3], (
        "each night adds one; none is lost"
    )
    first, second, third = _history(three_nights, 3)
    assert _history(three_nights, 1)[0].split()[0] == first.split()[0], "night 1 came back from the branch"
    assert "INCOMPLETE" not in first
    assert "INCOMPLETE" in third, third
    recorded = {p.name for n in (1, 2, 3) for p in (three_nights["tmp"] / f"night-{n}" / "record").iterdir()}
    assert len(recorded) == 3 and kept(three_nights["origin"]) == recorded, "the branch holds every night"
    (night_1,) = (three_nights["tmp"] / "night-1" / "record").iterdir()
    kept_1 = git(
        "--git-dir", str(three_nights["origin"]), "ls-tree", "--name-only", f"{BRANCH}:{night_1.name}"
    )
    assert kept_1.split() == ["diff.html.gz", "report.html.gz", "summary.json.gz"], "a finished night's whole record"
    site = three_nights["tmp"] / "night-3" / "site"
    assert (site / "index.html").is_file()
    page = (site / "history.html").read_text()
    assert page.count("<img") == 1, "one model, one selection: one axis"
    assert three_nights["baseline"].read_bytes() == three_nights["committed"], (
        "the team's baseline, byte for byte"
    )


def test_a_cancelled_night_still_records_and_reaches_the_branch(three_nights: dict[str, Any]) -> None:
    """On a cancel only the always() steps run on: the record and its upload, the answers' save; the history
    job (always()) still runs in full."""
    ran = {s.name: s for s in three_nights["nights"][2]}
    assert ran["Keep the night's record (a stand-in when the run wrote no summary.json)"].returncode == 0
    assert ran["Collect the report (reports/latest is a link)"].output == "skipped"
    assert ran["Add tonight's records to the branch mathcomp-history"].returncode == 0, said(
        list(ran.values())
    )
    assert ran["Build the site"].returncode == 0


def test_the_night_whose_server_died_is_marked_incomplete_with_its_reason(
    three_nights: dict[str, Any],
) -> None:
    second = _history(three_nights, 3)[1]
    assert "INCOMPLETE" in second and "stopped answering" in second, second


def test_a_night_that_ended_before_summary_json_keeps_a_stand_in_history_reads(tmp_path: Path) -> None:
    """The record step after a night that wrote no summary.json (cancelled, killed, out of memory): its
    stand-in is the suite's own format (version 2, incomplete, the reason), and history marks the night."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    left = ("Name this leg", "Choose this model's baseline and hub access", "Keep the night's record")
    workflow["jobs"]["suite"]["steps"] = [
        s for s in workflow["jobs"]["suite"]["steps"] if str(s.get("name", "")).startswith(left)
    ]  # the night's suite never ran: no summary.json under REPORTS
    trimmed = tmp_path / "nightly.yml"
    trimmed.write_text(yaml.safe_dump(workflow))
    ci = night_ci(tmp_path, MODEL)
    ci.workflow = trimmed
    steps = ci.run("suite", suite_env(tmp_path, tmp_path / "none.txt", ""))
    assert [s.returncode for s in steps] == [0, 0, 0], said(steps)
    (folder,) = (tmp_path / "night-1" / "record").iterdir()
    record = json.loads((folder / "summary.json").read_text())
    assert (record["version"], record["run_id"], record["model"], record["status"]) == (
        2, folder.name, MODEL, "incomplete"
    )  # fmt: skip
    assert folder.name.split("-", 2)[2].startswith("openai-tiny-"), "named as the run it stands for"
    history = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "history", str(folder.parent), "-o", str(tmp_path / "h.html")],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "INCOMPLETE: the job ended before the suite wrote summary.json" in history.stdout, history.stdout
