"""docs/examples' Slurm script and Kubernetes manifest run as written: each task's index from the scheduler,
the count where the suite reads it, and the shards merged into one run (docs/sharding.md)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml
from helpers import warm_runs
from helpers.merge_cli import merge
from helpers.suite_runner import REPO

from mathcomp_tests.records.results import run_started

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def test_the_slurm_script_runs_as_written(tmp_path: Path) -> None:
    """Run by bash with a fake sbatch that runs each job here: the log folder exists before the tasks start
    (the script made it only inside the task, after Slurm had opened the log there), every task keeps its
    own cache, the merge runs after the array (afterany) and the merged run has a dated id."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sbatch = bin_dir / "sbatch"
    python = warm_runs.python()  # the warm parent's stand-in where there is one: the commands forked, not started
    sbatch.write_text(f'#!/bin/sh\nexec "{python}" -m helpers.fake_sbatch "$@"\n')
    sbatch.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(Path(__file__).parent),
        "PYTHON": python,
        "FAKE_SBATCH_LOG": str(tmp_path / "jobs.jsonl"),
        "MATHCOMP_MODEL": "symbolic",
        "MATHCOMP_SHARDS": "2",
        "MATHCOMP_REPORTS": str(tmp_path / "shards"),
        "SBATCH_OPTIONS": "--time=00:10:00",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("PYTEST_XDIST_WORKER", None)
    args = ["-p", "no:cacheprovider", "--limit=4", "--framings=neutral", "--positions=end", "--generated=0"]
    submitted = subprocess.run(
        ["bash", str(EXAMPLES / "slurm-shards.sh"), *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    jobs = [json.loads(line) for line in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert [(j["name"], j["task"], j["returncode"]) for j in jobs] == [
        ("mathcomp-shards", 0, 0),
        ("mathcomp-shards", 1, 0),
        ("mathcomp-merge", None, 0),
    ], [Path(j["log"]).read_text()[-1500:] for j in jobs if Path(j["log"]).exists()]
    (root,) = (tmp_path / "shards").iterdir()
    assert run_started(root.name) is not None  # a dated run id names the run's folder
    assert sorted(p.name for p in (root / "cache").iterdir()) == ["0", "1"]  # a cache per task
    merged = json.loads((root / "merged" / "summary.json").read_text())
    assert (
        merged["run_id"] == root.name
        and merged["status"] == "complete"
        and merged["incomplete_reasons"] == []
    )
    assert [m["index"] for m in merged["merged_from"]] == [1, 2]


def test_the_kubernetes_manifest_is_an_indexed_job_with_the_count_the_suite_reads(tmp_path: Path) -> None:
    job = yaml.safe_load((EXAMPLES / "k8s-shards.yaml").read_text())
    assert job["kind"] == "Job"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert int(env["MATHCOMP_SHARDS"]) == spec["completions"]
    command = [*container["command"], *container["args"]]
    assert command[:3] == ["python", "-m", "pytest"]
    assert not any(a.startswith("--shard") for a in command)
    assert any(a.startswith("--reports-dir=") and "$(JOB_COMPLETION_INDEX)" in a for a in command)
    # Each pod's command, run here as Kubernetes would run it (the symbolic model for the manifest's, the
    # shared volume a folder), and the pods' run folders merged.
    small = [
        "--model=symbolic",
        "-p",
        "no:cacheprovider",
        "--limit=4",
        "--framings=neutral",
        "--positions=end",
    ]
    for index in range(spec["completions"]):
        pod = [
            a.replace("$(JOB_COMPLETION_INDEX)", str(index)).replace("/reports", str(tmp_path))
            for a in command
            if not a.startswith("--model=")
        ]
        ran = subprocess.run(
            [warm_runs.python() if pod[0] == "python" else pod[0], *pod[1:], *small, "--generated=0"],
            cwd=REPO, env={**os.environ, **env, "JOB_COMPLETION_INDEX": str(index)}, capture_output=True,
            text=True, timeout=600,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stdout[-1500:] + ran.stderr[-1500:]
    folders = [tmp_path / "shards" / str(i) / "latest" for i in range(spec["completions"])]
    done = merge(*folders, "--out", tmp_path / "merged")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MathComp merge: PASSED" in done.stdout
