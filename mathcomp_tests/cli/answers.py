"""`mathcomp answers --format F`: read one model answer from stdin the way the suite does.

Prints the label (or `invalid`) and the rule that decided it; the rules are formats.py's and reading/'s.
"""

from __future__ import annotations

import argparse
import sys

from ..formats import NAMES as FORMATS

HELP = "read one model answer from stdin as the suite does"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", required=True, choices=FORMATS, help="the answer format asked for")
    parser.add_argument(
        "--person-a", default="Person A", help='how the question named Person A (default: "Person A")'
    )
    parser.add_argument(
        "--person-b",
        default="Person B",
        help='how the question named Person B, e.g. "the woman" (default: "Person B")',
    )
    parser.add_argument(
        "--options",
        default=None,
        help='the option letters as the prompt listed them: "A) more\\nB) less\\nC) equal" or '
        '"A=more,B=less,C=equal" (default: the paper\'s A) less B) more C) equal)',
    )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..formats import read_text as read
    from ..reading.context import PAPER_OPTIONS, Context, OptionsError, Persons, parse_options

    try:
        options = parse_options(args.options.replace("\\n", "\n")) if args.options else dict(PAPER_OPTIONS)
        persons = Persons.named(args.person_a, args.person_b)
    except (OptionsError, ValueError) as exc:
        parser.error(str(exc))
    reading = read(sys.stdin.read(), args.format, Context(options, persons))
    print(reading.label or "invalid")
    print(f"decided by: {reading.rule}")
    return 0
