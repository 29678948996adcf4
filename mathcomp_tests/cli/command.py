"""What the subcommands share: how a usage error and a failure end them, and writing the output file.

Exit status: 0 done, 1 the command failed (damaged input, nothing could be written), 2 a usage error
(argparse's convention: the command line asks for something that cannot be).
"""

from __future__ import annotations

import argparse
import sys
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


def check_output(parser: argparse.ArgumentParser, output: Path | None) -> None:
    """-o must name a file: a directory is a usage error, found before any work is done."""
    if output is not None and output.is_dir():
        usage_error(parser, f"-o {output}: a directory; expected a file to write")


def write(path: Path, text: str) -> int:
    """Write ``text`` to ``path`` (replaced atomically, through a link, its mode kept: userfile.replace_text) and
    say so; one line and exit status 1 when the file cannot be written."""
    try:
        userfile.replace_text(path, text)
    except OSError as exc:
        return fail(f"cannot write {path}: {exc.strerror or exc}")
    print(f"wrote {path}")
    return 0
