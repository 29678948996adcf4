"""Every setting is placed once: it changes answers (every shard shares it; the merge rebuilds it), the gate
(the merge takes it from the shards), or only where the run reads, writes and reaches its model. A new
setting fails here until it is placed, so that shard.json and the merge cannot forget it. (The answer-changing
options were listed three times, in plugin/shard_manifest, merge/rebuild and the options, with nothing tying them.)"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from helpers.suite_runner import REPO

from mathcomp_tests.merge import rebuild, shard_format
from mathcomp_tests.merge.gate import Gate
from mathcomp_tests.merge.shards import ShardFolder
from mathcomp_tests.run.facts import facts_of
from mathcomp_tests.run.orchestrator import Run
from mathcomp_tests.settings import ANSWER_FIELDS, GATE_FIELDS, PLACE_FIELDS, Settings


def test_every_setting_is_placed_exactly_once() -> None:
    placed = [*ANSWER_FIELDS, *GATE_FIELDS, *PLACE_FIELDS]
    assert len(placed) == len(set(placed)), "a setting placed twice"
    assert set(placed) == {f.name for f in dataclasses.fields(Settings)}


def test_the_merge_rebuilds_every_answer_setting_a_shard_records(tmp_path: Path) -> None:
    """shard.json's options, as JSON, back to Settings: each answer-changing value as the shard ran it."""
    ran = Settings(
        model="symbolic", prompt_set="hf", framings=("neutral", "direct-less"), positions=("end",),
        identities=("std", "woman"),
        option_orders=("paper",), protocols=("plain", "evidence-lock"), limit=5, temperature=0.5, samples=2,
        max_new_tokens=9, chat_template="none", generated=3, hypothesis_seed=7, max_error_rate=0.25,
        paired_test="bootstrap", invariance=True, reveal_after=True, dataset_cache=tmp_path,
        thresholds=REPO / "thresholds.toml",
    )  # fmt: skip
    options = json.loads(json.dumps(shard_format.options(facts_of(Run(ran, "20261128-000000-symbolic-0000")))))
    shard = ShardFolder(tmp_path, {"selection": {"options": options}}, {"thresholds": str(ran.thresholds)})
    rebuilt = rebuild.settings(shard, tmp_path / "merged", Gate(None, None, False, "any", False))
    changed = [name for name in ANSWER_FIELDS if getattr(ran, name) != getattr(Settings(), name)]
    assert len(changed) >= 15, changed  # the values differ from the defaults: the round trip is seen
    assert {name: getattr(rebuilt, name) for name in ANSWER_FIELDS} == {
        name: getattr(ran, name) for name in ANSWER_FIELDS
    }
