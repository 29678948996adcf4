"""`mathcomp audit PATH.csv ...`: does every row verify, and do its equations say what its sentences say?

Prints one line per finding (row ID, what is wrong, the label a literal reading of the sentences gives),
then the file's distributions against the paper's appendix tables. Exit status 0 when every file is
clean, 1 when anything was found, 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "check a dataset CSV row by row, and its distributions"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH.csv", help="a CSV in the MathComp schema"
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..data.audit import audit, report
    from ..data.scenarios import DatasetError, read

    status = 0
    for path in args.paths:
        try:
            rows = read(path)
        except DatasetError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
            continue
        findings = audit(rows)
        print("\n".join(report(path, rows, findings)))
        if findings:
            status = max(status, 1)
    return status
