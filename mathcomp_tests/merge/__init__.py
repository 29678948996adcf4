"""`mathcomp merge`: the shards of one sharded run (docs/sharding.md) put back together into one run folder,
gated as the unsharded run would be.

The shards are checked first (merge/shards.py); any that is missing, doubled, foreign or incomplete makes
the merge INCOMPLETE: the folder still holds what the shards had (their records, a summary marked
incomplete with the reasons), and no baseline is written. Otherwise the whole run is rebuilt
(merge/rebuild.py) and run: the suite's own pytest session, here, over the shards' answers
(merge/session.py), writes summary.json, results.jsonl, report.html and --update-baseline as every run
does, its own checks included. Exit status is that session's: 0 passed, 1 failed or incomplete.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import summary_format
from ..baseline_file.format import BaselineError
from ..config.thresholds import ThresholdsError
from ..data.generated_draw import GENERATED_DIR
from ..records import results
from ..run import facts
from ..settings import SelectionError
from .folder import incomplete_folder
from .gate import Gate, GateOptions, resolve
from .provenance import check_dataset, check_same_model
from .rebuild import FOLDERS, Replay, settings, shard_records
from .replay import Answers
from .session import MergePlan, run_suite
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
        whole, replay = _run(checked.shards[0], building, name, resolve(gate, checked.shards[0], say), kept)
        plan = MergePlan(whole, replay, checked.shards, kept, out, checked.reasons)
        if checked.reasons:
            summary, status = incomplete_folder(plan, say), 1
            if gate.update_baseline is not None:
                say(f"baseline not written: the merge is INCOMPLETE; {gate.update_baseline} unchanged")
        else:
            check_dataset(checked.shards, Path(whole.dataset["path"]))
            status = run_suite(plan, say)
            summary = summary_format.load(building)
        swap_in(building, out)
    return Outcome(summary, status)


def _run(
    first: ShardFolder, out: Path, name: str, gate: Gate, kept: dict[str, list[dict[str, Any]]]
) -> tuple[facts.RunFacts, Replay]:
    """The whole run's facts, and what answers it from the shards' records; ShardFolderError when it cannot
    be rebuilt here."""
    answers = Answers(record for folder in FOLDERS for record in kept[folder])
    replay = Replay(answers, kept[""] + kept[GENERATED_DIR], out)
    try:
        return facts.rebuilt(settings(first, out, gate), name, replay), replay
    except (BaselineError, ThresholdsError, SelectionError) as exc:
        raise ShardFolderError(str(exc)) from exc
    except (OSError, ValueError) as exc:  # the dataset or the prompts the shards read, not here
        raise ShardFolderError(f"{first.path}: the whole run cannot be rebuilt here: {exc}") from exc
