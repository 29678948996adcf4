"""A merged run's usage is what its shards asked of the model: under --protocol=all a prompt asked again by
another protocol is answered from the cache in the shard, and the merged summary counted 46 cached requests
where the shards had 56 + 56 (the replay answered every repeat with the first record of it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.merge_cli import finished_shards, merge
from helpers.suite_runner import run_suite

pytestmark = pytest.mark.xdist_group("merge")

SELECTION = (
    "--model=symbolic",
    "--limit=4",
    "--framings=neutral,direct-less",
    "--positions=end",
    "--protocol=all",
)


def test_the_merged_usage_is_the_shards_usage_and_the_whole_runs(tmp_path: Path) -> None:
    shards = finished_shards(tmp_path, *SELECTION)
    whole = run_suite(tmp_path / "whole", *SELECTION)
    done = merge(*shards, "--out", tmp_path / "merged")
    assert done.returncode == whole.returncode, done.stdout + done.stderr
    merged = json.loads((tmp_path / "merged" / "summary.json").read_text())["usage"]
    parts = [json.loads((s / "summary.json").read_text())["usage"] for s in shards]
    assert parts[0]["cached_requests"] > 0  # the protocols repeat prompts: the test has something to count
    for key in ("requests", "cached_requests", "input_tokens", "cached_input_tokens"):
        assert merged[key] == sum(p[key] for p in parts) == whole.summary["usage"][key], key
