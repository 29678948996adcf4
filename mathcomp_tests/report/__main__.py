"""`python -m mathcomp_tests.report RUN_DIR [RUN_DIR ...]`: rebuild one run's report, or put several runs'
side by side, from their run folders (summary.json, results.jsonl); no model is called."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .standalone import RunFolderError, combine, rebuild


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mathcomp_tests.report", description=__doc__)
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
    args = parser.parse_args(argv)
    try:
        if len(args.run_dirs) == 1:
            text = rebuild(args.run_dirs[0])
            output = args.output or args.run_dirs[0] / "report-rebuilt.html"
        else:
            text = combine(args.run_dirs)
            output = args.output or args.run_dirs[0].resolve().parent / "combined-report.html"
    except RunFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    output.write_text(text, encoding="utf-8")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
