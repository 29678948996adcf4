"""`mathcomp merge SHARD_DIR... --out RUN_DIR`: the run folders of a sharded run's shards (pytest
--shard=I/N, docs/sharding.md) put back into one run folder and gated as the unsharded run would be.

The shards are checked first: each folder must hold shard.json and summary.json; every shard must be of
the same run (one fingerprint: model, code version, dataset, cases, scenarios, the options that change
answers), indexes 1 to N each once, and each complete. One missing, doubled, from another run or
incomplete makes the merge INCOMPLETE: RUN_DIR holds the shards' records and a summary marked incomplete,
naming why, and --update-baseline is not written. Otherwise the suite's own pytest session runs here over
the shards' answers (no model is called), collecting and selecting as the shards did: the project's own
checks, results.jsonl, summary.json, report.html, the comparison with --baseline (paired tests over all
items), --holm across all tests, and --update-baseline, as an unsharded run does them. The verdict goes
to $GITHUB_STEP_SUMMARY too, as a run's does. The merged run's id (in its summary, its records and the
night's history) is --run-id, else a new dated id, as every run's. RUN_DIR is built beside itself and
swapped in whole.

Exit status, as pytest's for the unsharded run: 0 the run passed; 1 a case failed (under --fail-on=new: a
new failure), or the merge is INCOMPLETE; 2 a usage error (a folder that is no shard's, RUN_DIR not new or
not writable, an --update-baseline it may not write, a file the shards read that is not here as they read
it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .command import usage_error

HELP = "merge the run folders of a sharded run into one, and gate it"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR", help="a shard's run folder")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="RUN_DIR", help="the merged run's folder (new, or empty)"
    )
    parser.add_argument(
        "--run-id",
        default=None,
        metavar="ID",
        help="the merged run's id, in its summary, records and history (default: a new dated id, as every run's)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        metavar="FILE",
        help="compare with this baseline file or run folder (default: the one the shards were compared with)",
    )
    parser.add_argument(
        "--update-baseline",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the merged run's answers as the baseline file here (only from a complete merge)",
    )
    parser.add_argument(
        "--holm",
        action="store_true",
        default=None,
        help="Holm-correct the baseline tests across all cases (default: as the shards ran)",
    )
    parser.add_argument(
        "--fail-on",
        choices=("any", "new"),
        default=None,
        help="which failed cases fail the merged run: any, or new ones only (needs a baseline); default: as "
        "the shards ran",
    )
    parser.add_argument(
        "--require-power",
        action="store_true",
        default=None,
        help="fail a merged run that could not see a rise of detect_rise (default: as the shards ran)",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..merge import GateOptions, ShardFolderError, merge
    from ..plugin.finish import write_job_summary
    from ..verdict.of_run import verdict

    gate = GateOptions(args.baseline, args.update_baseline, args.holm, args.fail_on, args.require_power)
    try:
        outcome = merge(args.shards, args.out, gate, print, args.run_id)
    except ShardFolderError as exc:
        usage_error(parser, str(exc))
    print(f"MathComp merge: {verdict(outcome.summary).line}")
    print(f"run folder: {args.out}")
    report = args.out / "report.html"
    unwritten = write_job_summary(outcome.summary, report if report.is_file() else None)
    if unwritten:
        print(unwritten)
    sys.stdout.flush()
    return outcome.exit_status
