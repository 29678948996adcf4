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

from ..records import results
from ..scoring.baseline import BaselineError
from ..scoring.thresholds import ThresholdsError
from ..settings import SelectionError
from .gate import Gate, GateOptions, resolve
from .provenance import check_dataset, check_same_model
from .rebuild import FOLDERS, MergedRun, settings, shard_records
from .replay import Answers, NoAnswer
from .shards import ShardFolder, ShardFolderError, check, read

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
    """Merge the shards' run folders into ``out`` (a new folder), as the run ``run_id`` (default: the
    folder's name); ShardFolderError (a usage error, one line) for a folder that is no shard's, an ``out``
    that holds files already, a run id that cannot name a record, or files the shards read that are not
    here as they read them."""
    if run_id is not None and not results.safe_run_id(run_id):
        raise ShardFolderError(
            f"--run-id {run_id!r}: a run id is one plain name of letters, digits, '.', '_', '-' and '+', a "
            "letter or digit first (it names the night's record)"
        )
    name = out.name if run_id is None else run_id
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ShardFolderError(
            f"--out {out}: exists and is not an empty folder; give a new folder for the merged run"
        )
    read_in = [read(path) for path in folders]
    checked = check(read_in)
    if checked.shards:
        check_same_model(checked.shards)
    kept = shard_records(checked.shards)
    if checked.reasons:
        return _incomplete(out, name, checked.shards, kept, checked.reasons, gate, say)
    whole = _run(checked.shards[0], out, name, resolve(gate, checked.shards[0], say), kept)
    check_dataset(checked.shards, whole.dataset.path)
    from .folder import report, update_baseline
    from .recompute import recompute

    try:
        summary = recompute(whole, checked.shards, kept)
    except NoAnswer as exc:
        shutil.rmtree(out, ignore_errors=True)
        return _incomplete(out, name, checked.shards, kept, [str(exc)], gate, say)
    results.write_summary(out, summary)
    report(out, summary, say)
    if gate.update_baseline is not None:
        say(update_baseline(out, summary, gate.update_baseline))
    return _outcome(summary)


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
    gate: GateOptions,
    say: Say,
) -> Outcome:
    from .folder import incomplete_folder

    summary = incomplete_folder(out, name, shards, kept, reasons, say)
    if gate.update_baseline is not None:
        say(f"baseline not written: the merge is INCOMPLETE; {gate.update_baseline} unchanged")
    return _outcome(summary)


def _outcome(summary: dict[str, Any]) -> Outcome:
    from ..report.failures import verdict

    return Outcome(summary, 0 if verdict(summary).passed else 1)
