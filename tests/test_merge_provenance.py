"""`mathcomp merge` refuses shards that did not all run on one thing, as a usage error naming the shard and the
field: the dataset here changed since the shards ran (the merge re-read it and scored the shards' answers
against gold labels no shard was asked about), or one shard answered with other weights (the merged summary
claimed the first shard's identity). Nothing is written to --out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.merge_cli import finished_shards, merge
from helpers.suite_runner import REPO, run_suite

pytestmark = pytest.mark.xdist_group("merge")

SELECTION = ("--limit=4", "--framings=neutral", "--positions=end")


def test_a_dataset_changed_since_the_shards_ran_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "scenarios.csv"
    shutil.copyfile(REPO / "fixtures/scenarios.csv", data)
    shards = finished_shards(tmp_path, "--model=symbolic", *SELECTION, f"--dataset={data}")
    data.write_text(data.read_text() + "\n")  # a blank line at the end: the same scenarios, another file
    out = tmp_path / "merged"
    done = merge(*shards, "--out", out)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "error:" in line]
    assert "shard.json: selection.dataset.sha256 is " in line and f"the dataset here ({data})" in line
    assert not (out / "summary.json").exists()


def test_shards_that_answered_with_other_weights_are_refused(tmp_path: Path) -> None:
    from safetensors.torch import load_file, save_file

    model = tmp_path / "model"
    shutil.copytree(REPO / "fixtures/models/mathcomp-tiny", model)
    args = (f"--model=hf:{model}", *SELECTION)
    first = run_suite(tmp_path / "shard-1", *args, "--shard=1/2")
    weights = load_file(model / "model.safetensors")
    name = sorted(weights)[0]
    weights[name] = weights[name] + 0.01  # a fine-tune's step, between the two shards
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    second = run_suite(tmp_path / "shard-2", *args, "--shard=2/2")
    assert first.returncode == second.returncode == 0, second.output[-1500:]
    out = tmp_path / "merged"
    done = merge(first.run_dir, second.run_dir, "--out", out)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "error:" in line]
    assert "shard 2 of 2" in line and "shard.json's model_identity is 'weights:" in line
    assert not (out / "summary.json").exists()
