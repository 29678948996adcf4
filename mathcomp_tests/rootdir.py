"""Where the suite keeps its files when not told: pytest's rootdir, found the way pytest finds it, so that
commands run outside pytest (`mathcomp cache`) look where the plugin wrote."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import iniconfig

CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
"""The files pytest looks for in each folder, in its order of precedence."""
CACHE_FOLDER = ".mathcomp-cache"
CACHE_VARIABLE = "MATHCOMP_CACHE_DIR"
ROOTDIR_HELP = (
    "the folder pytest would take as its rootdir from here: the nearest one upwards whose pytest.ini, "
    "pyproject.toml, tox.ini or setup.cfg configures pytest, else the nearest with a pyproject.toml, else "
    "with a setup.py, else the current directory"
)


def rootdir(start: Path | None = None) -> Path:
    """pytest's rootdir for a run started in ``start`` (default: the working directory) without path
    arguments: the nearest folder whose configuration file configures pytest; else the nearest with any
    pyproject.toml; else the nearest with a setup.py; else ``start``."""
    here = Path(os.path.abspath(start or Path.cwd()))
    folders = (here, *here.parents)
    first_pyproject: Path | None = None
    for folder in folders:
        for name in CONFIG_FILES:
            path = folder / name
            if not path.is_file():
                continue
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = folder
            if configures_pytest(path):
                return folder
    if first_pyproject is not None:
        return first_pyproject
    return next((f for f in folders if (f / "setup.py").is_file()), here)


def configures_pytest(path: Path) -> bool:
    """True when pytest reads its configuration from ``path``: always for its own files, for the others
    when they hold a pytest section. A file that cannot be parsed counts as none (pytest stops on it)."""
    if path.name in ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"):
        return True
    try:
        if path.name == "pyproject.toml":
            tool = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
            table = tool.get("pytest", {}) if isinstance(tool, dict) else {}
            return isinstance(table, dict) and bool(table)
        sections = iniconfig.IniConfig(str(path)).sections
    except (OSError, ValueError, iniconfig.ParseError):
        return False
    return ("pytest" if path.name == "tox.ini" else "tool:pytest") in sections


def cache_dir(given: str | Path | None = None, root: Path | None = None) -> Path:
    """The response cache's folder: ``given`` (--cache-dir), else $MATHCOMP_CACHE_DIR, else
    .mathcomp-cache at ``root`` (default: the rootdir found from the working directory)."""
    chosen = given or os.environ.get(CACHE_VARIABLE)
    return Path(chosen) if chosen else (root or rootdir()) / CACHE_FOLDER
