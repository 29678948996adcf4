"""The slow tiers `make check` leaves out name modules that exist (a renamed module would silently join the
fast tier), and `-m "not tier"` leaves out exactly them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.tiers import FIRST, TIERS, modules

TESTS = Path(__file__).resolve().parent


def test_every_tier_module_exists_and_the_model_tier_starts_first() -> None:
    missing = [m for m in modules() if not (TESTS / m).is_file()]
    assert not missing, f"named in tests/helpers/tiers.py but not in tests/: {missing}"
    assert set(FIRST) == set(TIERS["model"])


def test_not_tier_leaves_out_the_tier_modules_alone(pytester: pytest.Pytester) -> None:
    chosen = [
        "test_tiers.py",
        "test_keep.py",
        "test_release.py",
        "test_smollm2_lora.py",
        "test_site_browser.py",
    ]
    hf_home = os.environ["HF_HOME"]
    collected = pytester.runpytest_inprocess(
        *(str(TESTS / m) for m in chosen), "--collect-only", "-q", "-m", "not tier", "-p", "no:cacheprovider"
    )
    listed = {line.split("::")[0].rsplit("/", 1)[-1] for line in collected.outlines if "::" in line}
    assert listed == {"test_tiers.py", "test_keep.py"}, collected.outlines[-5:]
    assert os.environ["HF_HOME"] == hf_home, "loading tests/conftest.py again in this process kept its HF_HOME"
