"""The folder of an INCOMPLETE merge, whose shards do not make one whole run (one missing, doubled, foreign or
incomplete): the shards' records as they were, a summary with no case and the reasons, and its report
(report/standalone.py, from the folder). No case is scored on part of the data, and no baseline written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..records.results import REPORT, RESULTS, write_summary
from ..run.summary import stand_in
from .session import merged_from
from .shards import ShardFolder


def incomplete_folder(
    out: Path, run_id: str, shards: Sequence[ShardFolder], kept: dict[str, list[dict[str, Any]]],
    reasons: list[str], say: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    """``out`` with every record the shards that belong to the run hold (by shard, in index order) and a
    summary marked incomplete with ``reasons``: no case is scored on part of the data."""
    out.mkdir(parents=True, exist_ok=True)
    for folder, records in kept.items():
        if records or not folder:
            target = out / folder if folder else out
            target.mkdir(parents=True, exist_ok=True)
            _write_lines(target / RESULTS, records)
    model = str(shards[0].manifest["selection"]["model"]) if shards else ""
    summary = {**_header(shards), **stand_in(run_id, model, reasons[0]), "merged_from": merged_from(shards)}
    summary["incomplete_reasons"] = list(reasons)
    write_summary(out, summary)
    report(out, summary, say)
    return summary


UNSCORED: dict[str, Any] = {
    "baseline": None, "failures": None, "power": None, "invariance": None, "reveal_after": [], "shard": None,
    "protocols": {}, "protocol_comparison": None, "narrowed": None, "generated": None, "batch": None,
    "prompts_sent": 0, "records_dropped": [], "servers_left": [], "tests_failed": [],
}  # fmt: skip
"""What an INCOMPLETE merge's summary says of what it did not score."""


def _header(shards: Sequence[ShardFolder]) -> dict[str, Any]:
    """The facts every shard shares (the model, the dataset, the selection, the ceilings' file) from the
    first one, with the whole selection's scenarios and nothing of what was scored."""
    if not shards:
        return dict(UNSCORED)
    first, ids = shards[0].summary, list(shards[0].manifest["selection"]["scenario_ids"])
    usage = {k: (None if k == "cost_usd" else 0) for k in first.get("usage") or {}}
    return {**first, **UNSCORED, "usage": usage, "scenarios": len(ids), "scenario_ids": ids}


def _write_lines(path: Path, records: Sequence[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    os.replace(tmp, path)


def report(out: Path, summary: dict[str, Any], say: Callable[[str], None]) -> None:
    """report.html in ``out``, rebuilt from its summary.json and results.jsonl by the report's code."""
    from ..report.standalone import rebuild
    from ..userfile import replace_text

    replace_text(out / REPORT, rebuild(out, lambda note: say(f"warning: {note}")))
