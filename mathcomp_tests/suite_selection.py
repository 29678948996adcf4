"""Where the suite lives, and whether a session's collection arguments reach it.

Read before any conftest loads (by the `pytest11` entry module) and again by the plugin; imports nothing
of the project, so that deciding costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

SUITE_DIR = Path(__file__).resolve().parent / "suite"
MODULES = ("mathcomp_tests", "mathcomp_tests.suite")


def selects_suite(args: Sequence[str], invocation_dir: Path) -> bool:
    """True when one of these collection arguments (paths, node ids or --pyargs module names) reaches
    the suite."""
    for arg in args:
        target = arg.split("::")[0]
        if target in MODULES or target.startswith("mathcomp_tests.suite."):
            return True
        path = Path(invocation_dir, target).resolve()
        if path == SUITE_DIR or SUITE_DIR in path.parents:
            return True
        if path in SUITE_DIR.parents and _recursed_into(SUITE_DIR.relative_to(path).parts):
            return True
    return False


def _recursed_into(parts: tuple[str, ...]) -> bool:
    """Whether collecting a folder reaches the suite below it by these folder names: pytest never enters
    hidden folders or virtualenvs, so a project's `.venv/.../site-packages/mathcomp_tests` is not selected."""
    return not any(p.startswith(".") or p in ("site-packages", "dist-packages") for p in parts)


def collection_args(config: pytest.Config) -> list[str]:
    """The arguments pytest will collect, read before the plugin's options exist: the bare ones, else the
    ini file's testpaths when run from the rootdir, else the working directory.

    At that point `--model symbolic` still looks like an option and a bare word; bare words that are
    neither a path nor the suite's module are left out, so they neither select the suite nor hide the
    testpaths that do."""
    bare = [
        a
        for a in getattr(config.known_args_namespace, "file_or_dir", None) or []
        if _names_something(a, config.invocation_params.dir)
    ]
    if bare:
        return bare
    if config.invocation_params.dir == config.rootpath:
        testpaths = list(config.getini("testpaths"))
        if testpaths:
            return testpaths
    return [str(config.invocation_params.dir)]


def _names_something(arg: str, invocation_dir: Path) -> bool:
    target = arg.split("::")[0]
    return (
        target in MODULES
        or target.startswith("mathcomp_tests.suite.")
        or Path(invocation_dir, target).exists()
    )
