"""`mathcomp history REPORTS_DIR`: every metric across the runs in a reports folder, as a self-contained
HTML page with one plot per model; the numbers are printed as a table too."""

from __future__ import annotations

import argparse
from pathlib import Path

from .command import check_output, fail, usage_error, write

HELP = "every run's metrics across time: a table and a page"


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


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..report.standalone import METRICS, DamagedRunError, RunFolderError, history, percent

    check_output(parser, args.output)
    try:
        text, rows = history(args.reports_dir)
    except DamagedRunError as exc:
        return fail(str(exc))
    except RunFolderError as exc:
        usage_error(parser, str(exc))
    if not rows:
        usage_error(parser, f"{args.reports_dir}: no finished runs (folders with summary.json)")
    print(f"{'run':<52} " + " ".join(f"{n:>14}" for n in METRICS))
    for _model, run_id, metrics in rows:
        cells = " ".join(f"{percent(metrics[n]):>14}" for n in METRICS)
        print(f"{run_id:<52} {cells}")
    return write(args.output or args.reports_dir / "history.html", text)
