"""What `mathcomp init [DIR]` writes: starter files for running the suite in another repository.

``thresholds.toml`` (the packaged ceilings, to edit), ``conftest.py`` (a check of the project's own through
the ``pytest_mathcomp_check`` hook, to edit), a ``mathcomp-baseline/`` folder and a CI example
(``.github/workflows/mathcomp.yml``, which installs this very version of the package and runs their model);
none is overwritten without ``force``. The command line is in cli/init.py.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

from .paths import PACKAGE, default_thresholds

STARTER = PACKAGE / "starter"
DEMO_COMMAND = "pytest --pyargs mathcomp_tests.suite"
"""The suite on the packaged demonstration model: checks the installation end to end."""

THRESHOLDS_HEADER = """\
# Ceilings for the MathComp suite in this repository (starter written by `python -m mathcomp_tests init`).
# This file replaces the packaged defaults as a whole. Tighten [default] for your model, or add a section
# for it, keyed by what you pass to --model:
#
# [model."{model}"]
# dir_err = {{ less = 0.15, more = 0.15, equal = 0.15 }}

"""


def installed_version() -> str:
    """The version of mathcomp-tests installed here: the one the starter workflow installs."""
    return metadata.version("mathcomp-tests")


def starter_files(model: str) -> dict[Path, str]:
    """Relative path -> content of every file init writes."""
    return {
        Path("thresholds.toml"): THRESHOLDS_HEADER.format(model=model)
        + default_thresholds().read_text(encoding="utf-8"),
        Path("mathcomp-baseline", "README.md"): (STARTER / "baseline-README.md").read_text(encoding="utf-8"),
        Path(".github", "workflows", "mathcomp.yml"): (STARTER / "mathcomp.yml")
        .read_text(encoding="utf-8")
        .replace("__MODEL__", model)
        .replace("__VERSION__", installed_version()),
        Path("conftest.py"): (STARTER / "conftest.py").read_text(encoding="utf-8"),
    }


def commands(model: str) -> list[str]:
    return [DEMO_COMMAND, f"{DEMO_COMMAND} --model={model}"]


class InitPathError(ValueError):
    """A file stands where init needs a folder (the target, or a folder on the way to a starter file), or
    a folder where it writes a file; found before anything is written."""


def blocked(target: Path, files: list[Path]) -> None:
    """InitPathError naming the first path in the way: init writes all of its files or none."""
    if target.exists() and not target.is_dir():
        raise InitPathError(f"{target}: a file, not a folder; expected the repository's folder")
    above = next((p for p in target.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise InitPathError(
            f"{above}: a file where {target} needs a folder; expected the repository's folder"
        )
    for path in files:
        for folder in reversed(path.relative_to(target).parents[:-1]):
            if (target / folder).exists() and not (target / folder).is_dir():
                raise InitPathError(
                    f"{target / folder}: a file where {path} needs a folder; move it away, nothing written"
                )
        if path.is_dir():
            raise InitPathError(
                f"{path}: a folder where the starter file goes; move it away, nothing written"
            )


def init(target: Path, model: str, force: bool = False) -> list[Path]:
    """Write the starter files under ``target``; the paths written. Nothing is written when any exists
    and ``force`` is off (FileExistsError names them), or when a path is in the way (InitPathError)."""
    files = {target / rel: text for rel, text in starter_files(model).items()}
    blocked(target, list(files))
    existing = [p for p in files if p.exists()]
    if existing and not force:
        names = ", ".join(str(p) for p in existing)
        raise FileExistsError(f"{names}: already there; nothing written (--force overwrites)")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)
