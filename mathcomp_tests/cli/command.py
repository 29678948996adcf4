"""What the subcommands share: how a usage error and a failure end them, and writing the output file.

Exit status: 0 done, 1 the command failed (damaged input, nothing could be written), 2 a usage error
(argparse's convention: the command line asks for something that cannot be).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .. import userfile


def usage_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """One line, ``<prog>: error: <message>``, exit 2."""
    parser.exit(2, f"{parser.prog}: error: {message}\n")


def fail(message: str) -> int:
    """One line, ``error: <message>``; the exit status 1 to return."""
    print(f"error: {message}", file=sys.stderr)
    return 1


def check_output(
    parser: argparse.ArgumentParser, output: Path | None, option: str = "-o", inputs: Sequence[Path] = ()
) -> None:
    """``option`` (-o, --html) must name a file outside every one of ``inputs`` (a run folder, a baseline
    file: what the command reads is never what it writes); anything else is a usage error, found before any
    work is done."""
    if output is None:
        return
    if output.is_dir():
        usage_error(parser, f"{option} {output}: a directory; expected a file to write")
    written = output.resolve()
    for source in inputs:
        read = source.resolve()
        if written == read or written.is_relative_to(read):
            usage_error(
                parser,
                f"{option} {output}: inside {source}, which this command reads; expected a file outside "
                "the runs it compares",
            )


def write(path: Path, text: str) -> int:
    """Write ``text`` to ``path`` (replaced atomically, through a link, its mode kept: userfile.replace_text) and
    say so; one line and exit status 1 when the file cannot be written."""
    try:
        userfile.replace_text(path, text)
    except OSError as exc:
        return fail(f"cannot write {path}: {exc.strerror or exc}")
    print(f"wrote {path}")
    return 0
