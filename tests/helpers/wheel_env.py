"""Build the wheel as the release does (its workflow's own build step, on a clean copy of the sources), run
the release workflow's other steps, and make virtualenvs where nothing of the checkout is on the path: the
project's dependencies are linked in from the running environment (offline, in under a second), everything
of mathcomp-tests itself (its editable install) is left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .shared_build import built_once

REPO = Path(__file__).resolve().parents[2]
RELEASE = REPO / ".github" / "workflows" / "release.yml"
BUILD_STEP = "Build the sdist and the wheel"
SOURCES = ("pyproject.toml", "README.md", "thresholds.toml", "mathcomp_tests", "fixtures")
"""What a build reads: copied, so that no stale build/ folder of the checkout leaks into the wheel."""


def release_job(name: str = "build") -> dict[str, Any]:
    """A job of .github/workflows/release.yml, as parsed."""
    return dict(yaml.safe_load(RELEASE.read_text())["jobs"][name])


def run_release_step(
    name: str, cwd: Path, env: Mapping[str, str], base: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The build job's step ``name`` as the runner runs it (`bash -e`, the job's environment with ``env``
    over it, on ``base`` or this process's environment), with this Python first on the PATH where the
    workflow's setup-python puts its own; output and errors together."""
    job = release_job()
    (step,) = [s for s in job["steps"] if s.get("name") == name]
    declared = {k: str(v) for k, v in job["env"].items()}
    environment = {**(os.environ if base is None else base), **declared, **env}
    environment["PATH"] = f"{Path(sys.executable).parent}:{environment.get('PATH', os.defpath)}"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=cwd,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )


def copy_sources(dest: Path) -> Path:
    """A clean copy of what a build reads (no build/, egg-info or bytecode of the checkout), at ``dest``."""
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


def build_wheel(dest: Path) -> Path:
    """The release workflow's build step (`python -m build`, no isolation, no network) on a copy of the
    sources, into ``dest/dist`` (the sdist beside the wheel); the .whl path."""
    built = run_release_step(BUILD_STEP, copy_sources(dest / "src"), {"DIST": str(dest / "dist")})
    assert built.returncode == 0, built.stdout
    (wheel,) = (dest / "dist").glob("mathcomp_tests-*.whl")
    return wheel


def release_build(fallback: Path) -> Path:
    """The release build step's work, a folder holding ``src`` and ``dist``: made once for the whole test
    session's workers (shared_build), for tests/test_release.py to check and tests/test_package.py to install
    (the build is the slowest step of either; each made its own before)."""

    def build(folder: Path) -> Path:
        build_wheel(folder)
        return folder

    return built_once("release-build", build, fallback)


def _ours(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(("mathcomp_tests", "mathcomp-tests", "__editable__")) and "mathcomp" in lowered


def isolated_venv(dest: Path, wheel: Path | None = None) -> Path:
    """A virtualenv whose site-packages links every installed dependency except mathcomp-tests, with
    ``wheel`` pip-installed into it when given; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = dest / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    for entry in ours.iterdir():
        if not _ours(entry.name) and entry.name != "__pycache__":
            os.symlink(entry, Path(purelib, entry.name))
    if wheel is not None:
        pip = [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
        ]
        subprocess.run([*pip, str(wheel)], check=True, capture_output=True, text=True)
    return python


def clean_env() -> dict[str, str]:
    """The environment for a subprocess in an isolated venv: offline, no PYTHONPATH, no MATHCOMP_* settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("MATHCOMP_")
    }
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env
