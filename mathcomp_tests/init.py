"""What `mathcomp init [DIR]` writes: starter files for running the suite in another repository.

``thresholds.toml`` (the packaged ceilings, to edit), ``conftest.py`` (a check of the project's own through
the ``pytest_mathcomp_check`` hook, to edit), a ``mathcomp-baseline/`` folder (how to make its baseline file),
a ``.gitignore`` for the run folders and the answer cache, and a CI example (``.github/workflows/mathcomp.yml``,
which installs this very version of the package with the extra their model needs, runs their model, and
gates it against the baseline file once one is committed); none is overwritten without ``force``. The
command line is in cli/init.py.
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


EXTRAS = {"hf": "hf", "api": "api", "vllm": "all", "symbolic": "hf"}
"""The package extra a model's backend needs: transformers for hf (and the demonstration model), litellm for
api, both for vllm (prompts rendered here, sent over HTTP); the symbolic reference needs none, and the demo
command the starter prints runs the hf demonstration model."""
GITIGNORE = """\
# Written by `mathcomp init`: each run's folder and the answer cache stay out of the repository
# (CI keeps them as an artifact and in its cache). The baseline file in mathcomp-baseline/ is committed.
reports/
.mathcomp-cache/
"""


def extra_for(model: str) -> str:
    """The extra to install for ``model`` (``[api]`` for ``gpt-4o-mini``, ``[hf]`` for ``hf:./dir``)."""
    from .backends import models

    try:
        kind = models.resolve(model).kind
    except ValueError:
        return "all"  # a name this version does not know: every backend, so that the run can say why
    return EXTRAS.get(kind, "all")


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
        .replace("__EXTRA__", extra_for(model))
        .replace("__VERSION__", installed_version()),
        Path("conftest.py"): (STARTER / "conftest.py").read_text(encoding="utf-8"),
    }


NOT_RELEASED = (
    "mathcomp-tests {version} is not on PyPI yet (no release has been published): until it is, the workflow's "
    'pip install line fails; install from a checkout instead (pip install "./mathcomp-tests[{extra}]", or the '
    "wheel `python -m build` makes there)"
)


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
    ignored = _ignore(target / ".gitignore")
    return [*files, *([ignored] if ignored else [])]


def _ignore(path: Path) -> Path | None:
    """Add GITIGNORE's lines that ``path`` (the repository's .gitignore, made when absent) lacks; the path
    when it changed. A .gitignore is the repository's own: appended to, never replaced."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    have = {line.strip() for line in old.splitlines()}
    wanted = [line for line in GITIGNORE.splitlines() if line.startswith("#") or line not in have]
    if all(line.startswith("#") for line in wanted):
        return None
    apart = ("" if old.endswith("\n") else "\n") + "\n" if old else ""
    with path.open("a", encoding="utf-8") as out:
        out.write(apart + "\n".join(wanted) + "\n")
    return path
