"""`mathcomp record RECORD_DIR --stand-in --model MODEL [--reason TEXT]`: the night's record of a run that
ended before writing its own summary.json (the job was cancelled, killed or ran out of memory), so that the
night is not lost: RECORD_DIR/<run-id>/summary.json, a run id as the suite would have given the run, marked
incomplete with the reason and no case, in the format the suite writes (docs/results.md). `mathcomp
history` shows the night as INCOMPLETE. The file is written whole (a temporary file renamed over it); an
existing record is never replaced. A finished run's summary.json is its own record: copy it as it is.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from .command import fail, usage_error

HELP = "a stand-in night record for a run that wrote no summary.json"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "record_dir", type=Path, metavar="RECORD_DIR", help="the folder of night records (created if missing)"
    )
    parser.add_argument(
        "--stand-in",
        action="store_true",
        help="write the stand-in of a run that ended before writing summary.json",
    )
    parser.add_argument("--model", default=None, help="the model the run tested, as given to --model")
    parser.add_argument(
        "--reason", default=None, help="why the run wrote no summary.json (default: the job ended before it did)"
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..records import results
    from ..run.summary import STAND_IN_REASON, stand_in

    if not args.stand_in:
        usage_error(
            parser,
            "the only record this command writes is --stand-in (a finished run's summary.json is copied as it is)",
        )
    if not (args.model or "").strip():
        usage_error(parser, "--model: expected the model the run tested, got nothing")
    reason = args.reason if (args.reason or "").strip() else STAND_IN_REASON
    run_id = results.new_run_id(args.model)
    folder = args.record_dir / run_id
    try:
        folder.mkdir(parents=True)
    except OSError as exc:
        return fail(f"cannot write a record in {args.record_dir}: {exc.strerror or exc}")
    try:
        path = results.write_summary(folder, stand_in(run_id, args.model, reason))
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return fail(f"cannot write {folder / results.SUMMARY}: {exc.strerror or exc}")
    print(f"wrote {path}")
    return 0
