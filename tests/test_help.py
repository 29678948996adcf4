"""`pytest --help` states every suite option's default and the variables that set one."""

from __future__ import annotations

import re
import subprocess
import sys

from suite_runner import REPO


def test_every_option_shows_its_default_and_its_variable() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    ).stdout
    section = out.split("MathComp framing-bias suite:", 1)[1].split("\n\n", 1)[0]
    entries = re.split(r"\n  (?=--)", "\n" + section)[1:]
    assert len(entries) >= 24
    for entry in entries:
        flat = " ".join(entry.split())
        assert "(default: " in flat, flat
    flat = " ".join(section.split())
    for variable in ("$MATHCOMP_MODEL", "$MATHCOMP_DATASET", "$MATHCOMP_CACHE_DIR"):
        assert f"{variable} sets the default" in flat
