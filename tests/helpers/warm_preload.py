"""What the warm processes import before they fork (helpers/warm_parent.py, helpers/warm_zygote.py): the
libraries every hf or API run imports first, pytest and its plugins, and the project's own modules, less
those pytest imports from their paths (NOT_PRELOADED)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

PYTEST_PARTS = (
    "_pytest.faulthandler", "_pytest.helpconfig", "_pytest.junitxml", "_pytest.pastebin", "_pytest.setuponly",
    "_pytest.setupplan", "_pytest.skipping", "_pytest.threadexception", "_pytest.tracemalloc", "_pytest.unittest",
    "_pytest.unraisableexception", "_pytest.warnings", "pdb", "pytest_html.hooks", "pytest_metadata.hooks",
)  # fmt: skip
"""What pytest and its plugins import as each run configures, not as pytest imports: preloaded too (a forked
symbolic run 0.26 CPU s, not 0.29). None reads the environment or the working directory as it imports
(tests/test_warm_parent.py checks); `_pytest._argcomplete` does, and is not here."""

PRELOADED = (
    "torch", "transformers", "transformers.models.llama.modeling_llama", "litellm", "sympy", "psutil", "accelerate",
    "jinja2", "scipy.special",
    # pytest and the plugins every run loads. Not xdist, which keeps the sys.path it is imported with for its
    # workers: here, it would be this process's, not the run's. Hypothesis (every run imports it, its plugin at
    # the least) keeps the working directory and the CI profile it is imported with: the child takes both
    # again (warm_python.enter).
    "pytest", "pytest_html.plugin", "pytest_metadata.plugin", "anyio.pytest_plugin", "hypothesis",
    *PYTEST_PARTS,
    # What `mathcomp history` and `mathcomp site` draw with (half a CPU second each): the child takes again
    # a `matplotlibrc` in its working directory (warm_python.enter); the variables it reads are READ_AT_IMPORT.
    "matplotlib.pyplot", "matplotlib.dates",
)  # fmt: skip


BARE = "bare"
"""MATHCOMP_TESTS_WARM=bare: a parent that preloads nothing, for a test about the parent itself, not its runs."""

PROJECT = "mathcomp_tests"
NOT_PRELOADED = (f"{PROJECT}.suite", f"{PROJECT}.starter", f"{PROJECT}.__main__")
"""The suite's test modules and conftest files (pytest imports them from their paths and rewrites them),
the starter's conftest template, and the command line's entry module."""


def project_modules(package: str = PROJECT) -> list[str]:
    """Every module of the project's ``package`` but NOT_PRELOADED (whose packages are not entered),
    importing each package to find its modules."""
    import importlib
    import pkgutil

    try:
        path = importlib.import_module(package).__path__
    except Exception:  # left for the child to fail on
        return []
    found = [package]
    for module in pkgutil.iter_modules(path, f"{package}."):
        if module.name.startswith(NOT_PRELOADED):
            continue
        found += project_modules(module.name) if module.ispkg else [module.name]
    return found


def preload() -> None:
    """Import what every hf or API run imports first, and the project's modules; a library that is missing
    is simply not preloaded, and a module that cannot be imported is left for the child to fail on."""
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for name in project_modules():
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    import importlib.metadata

    plugins = {
        name
        for dist in importlib.metadata.distributions()
        if any(ep.group == "pytest11" for ep in dist.entry_points)
        for name in _top_level(dist)
    }
    for name, module in list(sys.modules.items()):
        if module is not None and name.split(".")[0] in plugins:
            module.__doc__ = f"{module.__doc__ or ''}\nPYTEST_DONT_REWRITE"
    _keep_exit_finalizers_here()
    import gc

    gc.freeze()  # what was imported here is never garbage: pytest's collections at exit skip it


def _keep_exit_finalizers_here() -> None:
    """The finalizers the preloaded libraries registered to run at exit (torch's 180: the operators it
    registered, undone) are this process's, not its children's: a child's exit runs only those it made itself,
    as a fresh run that never imported the library does. Run in every child, torch's cost 0.2 CPU s a run."""
    import weakref

    for info in weakref.finalize._registry.values():  # type: ignore[attr-defined]
        info.atexit = False


def _top_level(dist: Any) -> set[str]:
    """The top-level modules and packages an installed distribution brings (Hypothesis: hypothesis and
    _hypothesis_globals, say), as pytest finds them for its plugins: from its files, else top_level.txt."""
    names = set((dist.read_text("top_level.txt") or "").split()) | {dist.metadata["Name"].replace("-", "_")}
    for file in dist.files or ():
        first = file.parts[0]
        if first.endswith(".py"):
            names.add(first[:-3])
        elif len(file.parts) > 1 and "." not in first:
            names.add(first)
    return names
