"""The merged run's cases and summary.json, computed by the suite's own code over every shard's answers: each
case asked (from the records) and scored as test_framing, test_generated and test_reveal_after do
(Run.run_case, run_generated_case, run_reveal_after; records/items.py case_summary), compared with
--baseline over all items, then run/summary.py run_summary over all records, Holm included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..records import items as records_items
from ..records import results
from ..run import GENERATED, REVEAL_AFTER
from ..run.summary import SessionFacts, run_summary
from ..scoring.baseline import GENERATED_PREFIX
from ..settings import conditions
from ..summary_format import completeness
from .rebuild import MergedRun
from .shards import ShardFolder


def recompute(
    run: MergedRun, shards: Sequence[ShardFolder], kept: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """summary.json of the whole run; raises replay.NoAnswer when a shard lacks an answer the run asks."""
    s = run.settings
    selected = conditions(s)
    run.learn_judge(kept[""] + kept[GENERATED])
    if (
        run.comparator is not None
    ):  # what plugin/__init__.py counts: test_framing's and test_generated's cases
        run.comparator.count_tests([*selected, *(selected if s.generated else [])])
    try:
        cases = [records_items.case_summary(run.run_case(c)) for c in selected]
        generated = [
            {**records_items.case_summary(run.run_generated_case(c)), "case": GENERATED_PREFIX + c.id}
            for c in (selected if s.generated else [])
        ]
        reveal = [run.run_reveal_after(c) for c in (run.reveal_after_conditions() if s.reveal_after else [])]
    finally:
        run.close()
    merged = results.merge_parts(run.run_dir, records_items.record_key)
    written = {"": merged.records}
    for sub in (GENERATED, REVEAL_AFTER):
        if (run.run_dir / sub).is_dir():
            written[sub] = results.merge_parts(run.run_dir / sub, records_items.record_key).records
    _as_the_shards_asked(cases + generated, shards)
    tests = len(shards[0].manifest["selection"]["tests"])
    facts = SessionFacts(
        stopped=None,
        selected=tests,
        reported=tests,
        records_dropped=[note for shard in shards for note in shard.summary.get("records_dropped") or []],
        servers_left=[line for shard in shards for line in shard.summary.get("servers_left") or []],
        reveal_after=sorted(reveal, key=lambda r: str(r["case"])),
    )
    summary = run_summary(run, facts, cases, generated, merged.records)
    first = shards[0].summary
    summary["model_identity"] = first.get("model_identity")  # the weights the shards answered with
    summary["chat_template"] = first.get("chat_template")
    summary["merged_from"] = merged_from(shards)
    unused = [
        f"{len(kept[sub]) - len(written.get(sub, []))} of the shards' {len(kept[sub])} records of "
        f"{sub or 'the fixed set'} were not asked by the whole run"
        for sub in kept
        if len(kept[sub]) != len(written.get(sub, []))
    ]
    if unused:
        reasons = [*summary["incomplete_reasons"], *unused]
        summary.update(completeness(reasons))
    return summary


def _as_the_shards_asked(cases: list[dict[str, Any]], shards: Sequence[ShardFolder]) -> None:
    """A case's ``sent``, ``judge_sent`` and ``usage`` count what the shards asked of the models (the replay
    sends nothing, and answers a prompt asked again under another protocol with the first record of it,
    cached or not): their sum over the shards' summaries of the case."""
    for case in cases:
        parts = [
            c
            for shard in shards
            for c in [*shard.summary.get("cases", []), *(shard.summary.get("generated_cases") or [])]
            if c.get("case") == case["case"]
        ]
        for key in ("sent", "judge_sent"):
            case[key] = sum(int(c.get(key) or 0) for c in parts)
        usage, theirs = case.get("usage"), [c["usage"] for c in parts if isinstance(c.get("usage"), dict)]
        if usage is None or not theirs:
            continue
        for key in ("requests", "input_tokens", "output_tokens", *records_items.CACHED_USAGE):
            usage[key] = sum(int(u.get(key) or 0) for u in theirs)
        costs = [float(u["cost_usd"]) for u in theirs if u.get("cost_usd") is not None]
        usage["cost_usd"] = sum(costs) if costs else None


def merged_from(shards: Sequence[ShardFolder]) -> list[dict[str, Any]]:
    """summary.json's ``merged_from``: each shard's index, folder and run id."""
    return [
        {"index": s.index, "count": s.count, "folder": str(s.path.resolve()), "run_id": s.manifest["run_id"]}
        for s in shards
    ]
