"""docs/examples' Slurm script and Kubernetes manifest: they parse, and they run shards the way
docs/sharding.md says (each task's index from the scheduler, the count where the suite reads it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def test_the_slurm_script_is_valid_bash_and_runs_an_array() -> None:
    script = EXAMPLES / "slurm-shards.sh"
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on this machine")
    checked = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    text = script.read_text()
    assert "#SBATCH --array=0-3" in text
    assert "python -m pytest" in text
    assert "--shard=" not in text  # the array's own variables name the shard
    assert "${SLURM_ARRAY_TASK_ID}" in text  # one run folder per task


def test_the_kubernetes_manifest_is_an_indexed_job_with_the_count_the_suite_reads() -> None:
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
