"""The nightly workflow's own commands, run here as the workflow runs them (bash, the job's environment),
on the symbolic backend and on the demo model, each against a baseline the suite wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.suite_runner import REPO, run_suite

WORKFLOW = REPO / ".github" / "workflows" / "nightly.yml"
SELECTION = "--limit=30 --framings=neutral,direct-more --positions=end"


def _job() -> dict[str, Any]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow[True]["schedule"], "a nightly schedule"  # YAML 1.1 reads the key `on` as True
    return dict(workflow["jobs"]["suite"])


def _local_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    """Every shell step after set-up (set-up installs the virtualenv this test already runs in)."""
    steps = [s for s in job["steps"] if "run" in s]
    assert steps[0]["run"].strip() == "make setup"
    return steps[1:]


def _run_workflow(tmp: Path, model: str, baseline: Path) -> list[subprocess.CompletedProcess[str]]:
    job = _job()
    env = {k: str(v) for k, v in job["env"].items() if "${{" not in str(v)}
    env.update(MODEL=model, BASELINE=str(baseline), REPORTS=str(tmp / "reports"), SUITE_ARGS=SELECTION)
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    done = []
    for step in _local_steps(job):
        proc = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step["run"]],
            cwd=REPO,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=900,
        )
        done.append(proc)
        if proc.returncode and step.get("if") != "always()":
            break
    return done


@pytest.mark.parametrize("model", ["symbolic", "hf:fixtures/models/mathcomp-tiny"])
def test_the_nightly_commands_compare_with_the_baseline_and_publish_the_report(
    tmp_path: Path, model: str
) -> None:
    baseline = tmp_path / "baseline.txt"
    made = run_suite(tmp_path / "base", *SELECTION.split(), f"--update-baseline={baseline}")  # the demo model
    assert baseline.exists(), made.output
    steps = _run_workflow(tmp_path, model, baseline)
    assert [p.returncode for p in steps] == [0, 0, 0], "\n".join(
        p.stdout[-3000:] + p.stderr[-2000:] for p in steps
    )
    artifact = tmp_path / "reports" / "nightly-artifact"
    assert {"report.html", "summary.json", "results.jsonl", "junit.xml", "history.html"} <= {
        p.name for p in artifact.iterdir()
    }
    suite = ET.parse(artifact / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "4" and suite.get("failures") == "0"  # 2 cases + 2 generated
    import json

    summary = json.loads((artifact / "summary.json").read_text())
    assert summary["baseline"]["compared"] == 2 and summary["baseline"]["rises"] == []
    assert summary["resolved"] == ("symbolic" if model == "symbolic" else "hf:fixtures/models/mathcomp-tiny")


def test_a_baseline_that_does_not_fit_fails_the_nightly_run_before_any_case(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.txt"
    made = run_suite(tmp_path / "base", "--model=symbolic", "--limit=10", f"--update-baseline={baseline}")
    assert made.returncode == 0, made.output
    steps = _run_workflow(tmp_path, "symbolic", baseline)
    assert (
        steps[0].returncode == 4
        and "does not fit this run: other scenarios" in steps[0].stderr + steps[0].stdout
    )
    assert (
        not (tmp_path / "reports" / "junit.xml").exists()
        or "testcase" not in (tmp_path / "reports" / "junit.xml").read_text()
    )


def test_the_committed_baseline_fits_the_default_run() -> None:
    """The nightly job compares with baseline.txt: it must still fit the bundled data and the default matrix
    (after a change to fixtures/scenarios.csv or the demo model, rewrite it with `pytest --update-baseline`)."""
    from mathcomp_tests import prompts
    from mathcomp_tests.backends.models import resolve
    from mathcomp_tests.data import datasets
    from mathcomp_tests.scoring import baseline
    from mathcomp_tests.settings import DEFAULT_MODEL, Settings, conditions

    committed = baseline.load(REPO / "baseline.txt")
    spec = resolve(DEFAULT_MODEL)
    dataset = datasets.resolve(None, None, REPO / ".mathcomp-cache")
    committed.check_fits(
        baseline.Fingerprint(
            dataset=dataset.name,
            dataset_sha256=baseline.sha256_of(dataset.path),
            prompt_set=prompts.load_prompt_set(spec.prompt_set).name,
            scenarios=tuple(s.id for s in dataset.scenarios),
            cases=tuple(c.id for c in conditions(Settings())),
        )
    )
    default = {c.id for c in conditions(Settings())}
    assert set(committed.cases) == default | {baseline.GENERATED_PREFIX + case for case in default}
    assert committed.model == spec.resolved
