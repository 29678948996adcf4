"""`mathcomp report RUN_DIR [RUN_DIR ...]`: rebuild one run's report, or put several runs' side by side,
from their run folders (summary.json, results.jsonl); no model is called.

A last line of results.jsonl cut short (the run was killed while writing it) is dropped with a warning.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .command import check_output, fail, usage_error, write

HELP = "rebuild a run's HTML report, or runs side by side"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs", nargs="+", type=Path, metavar="RUN_DIR", help="a run folder, e.g. reports/latest"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="the HTML file to write (default: RUN_DIR/report-rebuilt.html for one run, "
        "combined-report.html beside the first run folder for several)",
    )


def warn(note: str) -> None:
    print(f"warning: {note}", file=sys.stderr)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..report.standalone import DamagedRunError, RunFolderError, combine, rebuild

    check_output(parser, args.output)
    for run_dir in args.run_dirs:
        if run_dir.exists() and not run_dir.is_dir():
            usage_error(
                parser,
                f"{run_dir}: a file, not a run folder; expected a folder such as reports/latest (with summary.json)",
            )
    first = args.run_dirs[0]
    try:
        if len(args.run_dirs) == 1:
            text = rebuild(first, warn)
            output = args.output or first / "report-rebuilt.html"
        else:
            text = combine(args.run_dirs)
            output = args.output or first.resolve().parent / "combined-report.html"
    except DamagedRunError as exc:
        return fail(str(exc))
    except RunFolderError as exc:
        usage_error(parser, str(exc))
    return write(output, text)
