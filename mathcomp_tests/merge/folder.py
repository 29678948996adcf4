"""The folder of an INCOMPLETE merge, whose shards do not make one whole run (one missing, doubled, foreign or
incomplete): the shards' records as they were, a summary with no case and the reasons (built by the run's
own builder, run/summary.py, so it has every key a run's has), and its report (report/standalone.py, from the
folder). No case is scored on part of the data, and no baseline written."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import summary_format
from ..records.results import REPORT, RESULTS
from ..run.summary import SessionFacts, run_summary
from .session import MergePlan


def incomplete_folder(plan: MergePlan, say: Callable[[str], None]) -> dict[str, Any]:
    """The merged run's folder with every record the shards that belong to the run hold (by shard, in index
    order) and its summary, built by run/summary.py with no case and the plan's reasons: no case is scored
    on part of the data."""
    out = plan.run.run_dir
    out.mkdir(parents=True, exist_ok=True)
    for folder, records in plan.kept.items():
        if records or not folder:
            target = out / folder if folder else out
            target.mkdir(parents=True, exist_ok=True)
            _write_lines(target / RESULTS, records)
    written = {folder: len(records) for folder, records in plan.kept.items()}
    facts = SessionFacts(stopped=None, selected=None, reported=0, merged=plan.facts(written))
    summary = run_summary(plan.run, facts, [], [], records=[])
    summary_format.write(out, summary)
    report(out, summary, say)
    return summary


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
