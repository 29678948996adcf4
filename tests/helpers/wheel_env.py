"""Build the wheel from a clean copy of the sources, and make virtualenvs where nothing of the checkout is
on the path: the project's dependencies are linked in from the running environment (offline, in under a
second), everything of mathcomp-tests itself (its editable install) is left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "thresholds.toml", "mathcomp_tests", "fixtures")
"""What a build reads: copied, so that no stale build/ folder of the checkout leaks into the wheel."""


def build_wheel(dest: Path) -> Path:
    """`pip wheel` (no build isolation, no network) on a copy of the tracked sources; the .whl path."""
    src = dest / "src"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*command, "-w", str(dest / "dist"), str(src)], check=True, capture_output=True, text=True)
    (wheel,) = (dest / "dist").glob("mathcomp_tests-*.whl")
    return wheel


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
