"""`mathcomp merge`: the shards of one sharded run (docs/sharding.md) put back together into one run folder,
gated as the unsharded run would be.

The shards are checked first (merge/shards.py); any that is missing, doubled, foreign or incomplete makes
the merge INCOMPLETE: the folder still holds what the shards had (their records, a summary marked
incomplete with the reasons), and no baseline is written. Otherwise the whole run is rebuilt
(merge/rebuild.py) and every case is scored again by the suite's own code over all the shards' answers
(merge/recompute.py): summary.json, results.jsonl, report.html and --update-baseline as an unsharded run
writes them. Exit status as pytest's for the unsharded run: 0 passed, 1 failed or incomplete.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import summary_format
from ..records import results
from ..scoring.baseline import BaselineError
from ..scoring.thresholds import ThresholdsError
from ..settings import SelectionError
from .gate import Gate, GateOptions, resolve
from .provenance import check_dataset, check_same_model
from .rebuild import FOLDERS, MergedRun, settings, shard_records
from .replay import Answers, NoAnswer
from .shards import ShardFolder, ShardFolderError, check, read
from .targets import built_beside, check_out, check_update_baseline, swap_in

__all__ = ["GateOptions", "Outcome", "ShardFolderError", "merge"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class Outcome:
    summary: dict[str, Any]
    exit_status: int
    """0 the merged run passed; 1 it failed, or is incomplete (as pytest exits for such a run)."""


def merge(
    folders: Sequence[Path], out: Path, gate: GateOptions, say: Say, run_id: str | None = None
) -> Outcome:
    """Merge the shards' run folders into ``out`` (a new folder, built beside it and swapped in whole), as
    the run ``run_id`` (default: a new dated id, as every run's); ShardFolderError (a usage error, one line)
    for a folder that is no shard's, an ``out`` or ``--update-baseline`` the merge may not write, a run id
    that cannot name a record, or files the shards read that are not here as they read them."""
    if run_id is not None and not results.safe_run_id(run_id):
        raise ShardFolderError(
            f"--run-id {run_id!r}: a run id is one plain name of letters, digits, '.', '_', '-' and '+', a "
            "letter or digit first (it names the night's record)"
        )
    check_out(out)
    check_update_baseline(gate.update_baseline, folders, out)  # onto --baseline's file: as a whole run may
    read_in = [read(path) for path in folders]
    name = run_id or results.new_run_id(str(read_in[0].manifest["selection"].get("model") or "merged"))
    checked = check(read_in)
    if checked.shards:
        check_same_model(checked.shards)
    kept = shard_records(checked.shards)
    with built_beside(out) as building:
        if checked.reasons:
            summary = _incomplete(building, name, checked.shards, kept, checked.reasons, say)
        else:
            summary = _complete(
                building, name, checked.shards, kept, resolve(gate, checked.shards[0], say), say
            )
        swap_in(building, out)
    if gate.update_baseline is not None:
        if summary_format.is_incomplete(summary) and not summary.get("cases"):
            say(f"baseline not written: the merge is INCOMPLETE; {gate.update_baseline} unchanged")
        else:
            from .folder import update_baseline

            say(update_baseline(out, summary, gate.update_baseline))
    return _outcome(summary)


def _complete(
    building: Path, name: str, shards: list[ShardFolder], kept: dict[str, list[dict[str, Any]]], gate: Gate,
    say: Say,
) -> dict[str, Any]:  # fmt: skip
    """The whole run, scored again over the shards' answers, written into ``building``."""
    whole = _run(shards[0], building, name, gate, kept)
    check_dataset(shards, whole.dataset.path)
    from .folder import report
    from .recompute import recompute

    try:
        summary = recompute(whole, shards, kept)
    except NoAnswer as exc:
        for child in building.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
        return _incomplete(building, name, shards, kept, [str(exc)], say)
    results.write_summary(building, summary)
    report(building, summary, say)
    return summary


def _run(
    first: ShardFolder, out: Path, name: str, gate: Gate, kept: dict[str, list[dict[str, Any]]]
) -> MergedRun:
    answers = Answers(record for folder in FOLDERS for record in kept[folder])
    try:
        return MergedRun(settings(first, out, gate), name, answers, out)
    except (BaselineError, ThresholdsError, SelectionError) as exc:
        raise ShardFolderError(str(exc)) from exc
    except (OSError, ValueError) as exc:  # the dataset or the prompts the shards read, not here
        raise ShardFolderError(f"{first.path}: the whole run cannot be rebuilt here: {exc}") from exc


def _incomplete(
    out: Path,
    name: str,
    shards: Sequence[ShardFolder],
    kept: dict[str, list[dict[str, Any]]],
    reasons: list[str],
    say: Say,
) -> dict[str, Any]:
    from .folder import incomplete_folder

    return incomplete_folder(out, name, shards, kept, reasons, say)


def _outcome(summary: dict[str, Any]) -> Outcome:
    from ..report.failures import verdict

    return Outcome(summary, 0 if verdict(summary).passed else 1)
