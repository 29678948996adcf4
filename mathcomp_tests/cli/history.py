"""`mathcomp history REPORTS_DIR [--group NAME]`: the runs in a reports folder (one night each, or a CI's
kept records) as a regression view, grouped by the model each tested or was compared with, by identity
(or all under NAME): a self-contained HTML page with one plot per group and selection (a line per case over
its latest runs, the worst rise named, where each case first failed), and the numbers printed as a table,
partial runs and incomplete nights marked, a number that is none (NaN) as n/a. A damaged summary.json, or
one with a field of the wrong type, is skipped with one line naming it and the field, and counted on the
page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..printable import printable
from .command import check_output, fail, usage_error, write

HELP = "each base's runs across time: a table and a page"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "reports_dir", type=Path, metavar="REPORTS_DIR", help="a folder of run folders, e.g. reports/"
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="the HTML file to write (default: REPORTS_DIR/history.html)",
    )
    parser.add_argument(
        "--group",
        metavar="NAME",
        default=None,
        help="put every run in one group called NAME (default: group by the base each run was compared with, "
        "summary.json's baseline.model)",
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..history.build import history
    from ..history.page import METRICS, share
    from ..report.standalone import RunFolderError

    check_output(parser, args.output)
    if args.group is not None and not args.group.strip():
        usage_error(parser, "--group: expected a name, got an empty one")
    skipped: list[str] = []
    try:
        text, rows = history(args.reports_dir, args.group, skipped.append)
    except RunFolderError as exc:
        usage_error(parser, str(exc))
    if not rows:
        if skipped:  # nothing to show: the damage is the error
            more = f" (and {len(skipped) - 1} more damaged summary.json)" if len(skipped) > 1 else ""
            return fail(skipped[0] + more)
        usage_error(parser, f"{args.reports_dir}: no finished runs (folders with summary.json)")
    for line in skipped:
        print(printable(f"skipped {line}"), file=sys.stderr)
    print(f"{'run':<52} " + " ".join(f"{n:>14}" for n in METRICS) + "  role       worst rise")
    for group in dict.fromkeys(r.group for r in rows):
        print(printable(f"[{group}]"))
        for row in (r for r in rows if r.group == group):
            cells = " ".join(f"{share(row.metrics[n]):>14}" for n in METRICS)
            worst = row.worst.text() if row.worst else "n/a"
            partial = f"  PARTIAL: {row.partial}" if row.partial else ""
            night = "" if row.complete else f"  {row.night}"
            print(printable(f"{row.run_id:<52} {cells}  {row.role:<10} {worst}{partial}{night}"))
    return write(args.output or args.reports_dir / "history.html", text)
