"""Headless Chromium (the Debian package `chromium`) for tests that look at a page as a person would."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REQUIRE = "MATHCOMP_REQUIRE_BROWSER"
"""Set by .ci/run once it has installed chromium: then a missing browser fails instead of skipping."""


def chromium() -> str:
    """The browser's path; skips (or fails under .ci/run) with the reason when there is none."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    reason = (
        "no chromium on PATH: install the Debian package `chromium` (apt-get install -y chromium; "
        ".ci/run does this when it can) to run the rendered-report checks"
    )
    if os.environ.get(REQUIRE):
        pytest.fail(f"{REQUIRE} is set but {reason}")
    pytest.skip(reason)


def _command(binary: str, profile: Path) -> list[str]:
    return [
        binary,
        "--headless",
        "--no-sandbox",  # containers run as root, where Chromium's sandbox cannot start
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
    ]


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM after the page's scripts ran (not the file's source)."""
    proc = subprocess.run(
        [*_command(chromium(), profile), "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def screenshot(page: Path, target: Path, profile: Path, size: str = "1300,3000") -> Path:
    proc = subprocess.run(
        [
            *_command(chromium(), profile),
            f"--window-size={size}",
            f"--screenshot={target}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and target.exists(), proc.stderr[-2000:]
    return target
