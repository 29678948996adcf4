"""`mathcomp init [DIR]`: the starter files for running the suite in another repository.

Writes thresholds.toml (the packaged ceilings, to edit), a mathcomp-baseline/ folder and a CI example
(.github/workflows/mathcomp.yml) for --model, which is checked as the suite checks it; overwrites none of
them without --force; prints the two commands to run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .command import fail, usage_error

HELP = "starter thresholds, baseline folder and CI example"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", nargs="?", default=".", type=Path, help="the repository (default: .)")
    parser.add_argument(
        "--model",
        default="hf:./my-finetune",
        help="the model your CI tests, as --model takes it (default: %(default)s)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite files that already exist")


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from ..backends.models import UnknownModelError, resolve
    from ..init import InitPathError, commands, init

    try:
        resolve(args.model)
    except UnknownModelError as exc:
        usage_error(parser, f"--model={args.model}: {exc}")
    try:
        written = init(args.directory, args.model, args.force)
    except InitPathError as exc:
        usage_error(parser, str(exc))
    except FileExistsError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write {exc.filename or args.directory}: {exc.strerror or exc}")
    for path in written:
        print(f"wrote {path}")
    from ..init import NOT_RELEASED, extra_for, installed_version

    print(f"note: {NOT_RELEASED.format(version=installed_version(), extra=extra_for(args.model))}")
    print("\nRun, from the repository root (where thresholds.toml is):")
    for command in commands(args.model):
        print(f"  {command}")
    return 0
