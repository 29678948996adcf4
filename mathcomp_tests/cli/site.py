"""`mathcomp site RECORDS_DIR OUT`: a static site of the night records in RECORDS_DIR (one folder per night,
RECORDS_DIR/<run-id>/ with summary.json and, where kept, report.html and diff.html; `mathcomp record`
writes them), for GitHub Pages or any folder of files:

  index.html    one row per model: its newest night's verdict (INCOMPLETE first, then new failures, then
                known failures only, then passed), when it ran and links to that night's report and diff;
                then every night of each model, newest first
  history.html  the history page of the same records (`mathcomp history`)
  nights/<run-id>/report.html, diff.html   copied from the records

Every link is relative (the site opens from disk and under any sub-path), every page is self-contained and
the index runs no script; model names, reasons and case names are escaped. A damaged record, or a folder
whose name is no run id, is skipped with one line on stderr naming it, and the page counts it; so is a
second record of one run (the one published is named). The newest night is the one whose run started last
(the time its run id starts with; a run id without one counts as older than every dated night).

Nothing is read through a symbolic link: a record folder or a summary.json that is a link is skipped, a
report.html or diff.html that is a link is left out of its night, each with one line naming it.

OUT is created, or replaced whole: the site is built in a folder beside it and swapped in, never left half
built. It must be absent, an empty folder, or a site this command built (it holds .mathcomp-site): a folder
of other files, or a symbolic link, is refused and left as it is. A staged folder left beside OUT by a build
that was killed (.OUT.new-*, .OUT.old-*) is removed by the next build, with one line naming it. Ctrl-C is
one line, exit 130, OUT as it was.

Exit status: 0 built; 1 no record could be read, or OUT cannot be written; 2 a usage error (RECORDS_DIR is
not a folder; OUT is a file, a link, a folder of other files, or holds RECORDS_DIR); 130 interrupted.
docs/site.md describes the site.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..listing import counted
from ..printable import printable
from .command import fail, usage_error

HELP = "a static site of the night records: index, reports, history"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "records_dir",
        type=Path,
        metavar="RECORDS_DIR",
        help="the folder of night records (RECORDS_DIR/<run-id>/summary.json)",
    )
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT",
        help="the folder to write the site in: none, an empty one, or a site this command built (replaced whole)",
    )


def _check(parser: argparse.ArgumentParser, records: Path, out: Path) -> None:
    from ..site.build import foreign

    if not records.is_dir():
        what = "not a folder" if records.exists() else "no such folder"
        usage_error(parser, f"RECORDS_DIR {records}: {what}; expected the folder of night records")
    held, site = records.resolve(), out.resolve()
    if not out.is_symlink() and (held == site or site in held.parents):
        usage_error(parser, f"OUT {out} holds RECORDS_DIR {records}: replacing it would remove the records")
    if (refused := foreign(out)) is not None:
        usage_error(parser, printable(refused))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..site import build

    _check(parser, args.records_dir, args.out)

    def skip(line: str) -> None:
        print(printable(f"skipped {line}"), file=sys.stderr)

    try:
        built = build.site(args.records_dir, args.out, skip)
    except build.ForeignOut as exc:  # OUT changed since it was checked
        usage_error(parser, printable(str(exc)))
    except build.NothingRead as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write the site in {args.out}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        print(printable(f"{parser.prog}: interrupted; {args.out} left as it was"), file=sys.stderr)
        return 130
    for folder in built.removed:
        print(printable(f"removed {folder}: left by a site build that was stopped"), file=sys.stderr)
    print(
        printable(
            f"wrote {built.out}: {counted(built.nights, 'night')} of {counted(built.models, 'model')}, "
            f"{counted(built.skipped, 'record')} skipped"
        )
    )
    return 0
