"""A pytest plugin for the suite's runs under test (``-p helpers.taken_path``, tests/ on PYTHONPATH): once the
run has started, a folder (with a file in it) takes the path ``MATHCOMP_TESTS_TAKE`` names, as another
process could, so that a file the run checked at its start can no longer be replaced at its end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TAKE = "MATHCOMP_TESTS_TAKE"


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get(TAKE)
    if path and not hasattr(session.config, "workerinput"):
        Path(path).mkdir(parents=True, exist_ok=True)
        (Path(path) / "someone-elses.txt").write_text("not the run's\n")
