"""`python -m mathcomp_tests.history reports/`: every metric across the runs in a reports folder, as a
self-contained HTML page with one plot per model (and the numbers printed as a table)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .report.standalone import METRICS, RunFolderError, history, percent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mathcomp_tests.history", description=__doc__)
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
    args = parser.parse_args(argv)
    try:
        text, rows = history(args.reports_dir)
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not rows:
        print(f"error: {args.reports_dir}: no finished runs (folders with summary.json)", file=sys.stderr)
        return 2
    print(f"{'run':<52} " + " ".join(f"{n:>14}" for n in METRICS))
    for _model, run_id, metrics in rows:
        cells = " ".join(f"{percent(metrics[n]):>14}" for n in METRICS)
        print(f"{run_id:<52} {cells}")
    output = args.output or args.reports_dir / "history.html"
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
