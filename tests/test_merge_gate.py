"""`mathcomp merge` gates the merged run as the whole run the shards were parts of: a --baseline and a
--require-power the shards ran with hold for the merge unless it is given its own, and every option taken
from the shards, or given to one side only, is said. (Shards run with `--baseline B --require-power` and
merged without `--baseline` PASSED, exit 0, where the whole run exits 1: NOT EARNED.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.merge_cli import finished_shards, merge
from helpers.suite_runner import run_suite

pytestmark = pytest.mark.xdist_group("merge")

SELECTION = ("--model=symbolic", "--limit=6", "--framings=neutral,direct-less", "--positions=end")


def _comparable(run_dir: Path) -> dict[str, object]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {k: v for k, v in summary.items() if k not in ("run_id", "merged_from", "shard")}


def test_a_power_requirement_and_a_baseline_the_shards_ran_with_are_not_dropped(tmp_path: Path) -> None:
    base = tmp_path / "base.txt"
    made = run_suite(tmp_path / "base", *SELECTION, f"--update-baseline={base}")
    assert base.is_file(), made.output[-1500:]
    gated = (*SELECTION, f"--baseline={base}", "--require-power")
    whole = run_suite(tmp_path / "whole", *gated)
    assert whole.returncode == 1 and "NOT EARNED" in whole.output, whole.output[-1500:]
    shards = [run_suite(tmp_path / f"shard-{i}", *gated, f"--shard={i}/2") for i in (1, 2)]
    for shard in shards:  # a shard's power is its part's: it said "the run fails" and exited 0
        assert shard.returncode == 0 and "the run fails" not in shard.output, shard.output[-1500:]
        assert "the merge of all the shards decides the run's power" in shard.output
    out = tmp_path / "merged"
    done = merge(*(s.run_dir for s in shards), "--out", out)
    assert done.returncode == whole.returncode, done.stdout + done.stderr
    assert f"--baseline {base}: the shards were compared with it, and so is the merged run" in done.stdout
    assert "--require-power: the shards ran with it, and so does the merged run" in done.stdout
    assert _comparable(out) == _comparable(whole.run_dir)

    base.write_text(base.read_text().replace("less", "more", 1))  # the shards' baseline, changed since
    refused = merge(*(s.run_dir for s in shards), "--out", tmp_path / "merged-2")
    assert refused.returncode == 2 and "options.baseline" in refused.stderr, refused.stdout + refused.stderr
    assert "has changed since they ran" in refused.stderr


def test_a_gate_option_given_to_the_merge_only_is_said(tmp_path: Path) -> None:
    shards = finished_shards(tmp_path, *SELECTION)
    whole = run_suite(tmp_path / "whole", *SELECTION, "--holm", "--require-power")
    done = merge(*shards, "--out", tmp_path / "merged", "--holm", "--require-power")
    assert "--holm: given to the merge, not to the shards; the merged run is gated with it" in done.stdout
    assert "--require-power: given to the merge, not to the shards" in done.stdout
    assert done.returncode == whole.returncode, done.stdout + done.stderr
    assert _comparable(tmp_path / "merged") == _comparable(whole.run_dir)
