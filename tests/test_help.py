"""`pytest --help` states every suite option's default and the variables that set one.

In-process through pytester: what is checked is the plugin's wiring of its options, not a subprocess.
"""

from __future__ import annotations

import re

import pytest


def test_every_option_shows_its_default_and_its_variable(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("-p", "mathcomp_tests.plugin", "--help")
    out = result.stdout.str()
    section = out.split("MathComp framing-bias suite:", 1)[1].split("\n\n", 1)[0]
    entries = re.split(r"\n  (?=--)", "\n" + section)[1:]
    assert len(entries) >= 24
    for entry in entries:
        flat = " ".join(entry.split())
        assert "(default: " in flat, flat
    flat = " ".join(section.split())
    for variable in ("$MATHCOMP_MODEL", "$MATHCOMP_DATASET", "$MATHCOMP_CACHE_DIR"):
        assert f"{variable} sets the default" in flat
