"""A pytest plugin for the suite's runs under test (``-p helpers.interrupt_at``, tests/ on PYTHONPATH): the run
signals itself at named points of its end, from inside the step, as a user's Ctrl-C landing right there would.

``MATHCOMP_TESTS_INTERRUPT_AT`` lists the points, comma-separated (one signal each, in order):
- ``summary``: inside the summary.json write (summary_format.write), before a byte is written;
- ``latest``: inside the move of reports/latest (records.results.point_latest);
- ``baseline``: inside the --update-baseline write (baseline_file.writer.write);
- ``report``: while pytest-html builds report.html (its results-summary hook);
- ``table``: while the end-of-run table is printed (pytest_terminal_summary).
``MATHCOMP_TESTS_INTERRUPT_SIGNAL`` names the signal (default SIGINT, what Ctrl-C sends).
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable
from typing import Any

import pytest

POINTS = "MATHCOMP_TESTS_INTERRUPT_AT"
SIGNAL = "MATHCOMP_TESTS_INTERRUPT_SIGNAL"
PATCHED = {
    "summary": ("mathcomp_tests.summary_format", "write"),
    "latest": ("mathcomp_tests.records.results", "point_latest"),
    "baseline": ("mathcomp_tests.baseline_file.writer", "write"),
}


def _points() -> list[str]:
    return [p for p in os.environ.get(POINTS, "").split(",") if p]


def _signal_here(point: str) -> None:
    """Send the signal once for each time ``point`` is listed (the process's own main thread takes it)."""
    for _ in range(_points().count(point)):
        os.kill(os.getpid(), signal.Signals[os.environ.get(SIGNAL, "SIGINT")])


def _interrupting(point: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def step(*args: Any, **kwargs: Any) -> Any:
        _signal_here(point)
        return real(*args, **kwargs)

    return step


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    import importlib

    for point, (module, name) in PATCHED.items():
        if point in _points():
            owner = importlib.import_module(module)
            setattr(owner, name, _interrupting(point, getattr(owner, name)))


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(prefix: list[str], summary: list[str], postfix: list[str]) -> None:
    _signal_here("report")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    _signal_here("table")
