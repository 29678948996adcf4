"""A pytest plugin for the suite's runs under test (``-p helpers.hold_collection``, tests/ on PYTHONPATH):
each xdist worker, once it starts collecting, says so in a file and waits there until the test lets it go.

A test can then act at the moment it names ("while the workers start") on any machine, instead of guessing
how long collection takes. ``MATHCOMP_TESTS_HOLD_COLLECTION`` names the folder: a worker writes
``<worker>.held`` into it and waits for ``release`` to appear there (a signal ends the wait as it would end
a real collection)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

FOLDER = "MATHCOMP_TESTS_HOLD_COLLECTION"
RELEASE = "release"
HOLD_SECONDS = 300.0


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    # The run's own workers only: its controller may inherit PYTEST_XDIST_WORKER from the test's worker.
    folder, worker = os.environ.get(FOLDER), getattr(session.config, "workerinput", {}).get("workerid")
    if not folder or not worker:
        return
    Path(folder, f"{worker}.held").write_text("held\n")
    deadline = time.monotonic() + HOLD_SECONDS
    while not Path(folder, RELEASE).exists():
        assert time.monotonic() < deadline, "the test never released the collection"  # hang guard
        time.sleep(0.02)


def held(folder: Path) -> list[str]:
    """The workers waiting in their collection, by name."""
    return sorted(p.stem for p in folder.glob("*.held"))
