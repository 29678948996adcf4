"""`mathcomp`: the project's commands, one subcommand each. Every argument parser of the package is here.

`python -m mathcomp_tests` is the same command (where the console script is not installed).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from types import ModuleType

from . import (
    answers,
    audit,
    cache,
    diff,
    generate,
    history,
    init,
    keep,
    merge,
    plan,
    prepare,
    record,
    report,
    site,
)

COMMANDS: dict[str, ModuleType] = {
    "init": init,
    "audit": audit,
    "generate": generate,
    "answers": answers,
    "report": report,
    "merge": merge,
    "diff": diff,
    "history": history,
    "record": record,
    "site": site,
    "keep": keep,
    "cache": cache,
    "plan": plan,
    "prepare": prepare,
}
"""Each module: HELP (its line in `mathcomp --help`), configure(parser), run(args, parser) -> exit status;
its docstring is its --help text."""

DESCRIPTION = (
    "Commands around the MathComp framing-bias suite (the suite itself runs under pytest: "
    "pytest --pyargs mathcomp_tests.suite). `mathcomp COMMAND --help` describes each."
)
FORMAT = argparse.RawDescriptionHelpFormatter


def parser(prog: str = "mathcomp") -> argparse.ArgumentParser:
    """The whole command: one subparser per module of COMMANDS."""
    top = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    commands = top.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for name, module in COMMANDS.items():
        sub = commands.add_parser(name, help=module.HELP, description=module.__doc__, formatter_class=FORMAT)
        module.configure(sub)
        sub.set_defaults(_command=module, _parser=sub)
    return top


def main(argv: Sequence[str] | None = None, prog: str = "mathcomp") -> int:
    """`mathcomp [COMMAND] ...`; the exit status."""
    args = parser(prog).parse_args(argv)
    return int(args._command.run(args, args._parser))
