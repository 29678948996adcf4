"""The environment for a suite run that loads one of these helpers as a pytest plugin (``-p helpers.NAME``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def with_test_plugins(env: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``env`` with tests/ on PYTHONPATH (so ``-p helpers.NAME`` imports) and ``extra`` set."""
    paths = [str(TESTS), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(paths), **extra}
