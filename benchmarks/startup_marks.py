"""Timestamps of a suite run's phases: a pytest plugin for benchmarks/suite_startup.py.

Loaded with ``-p benchmarks.startup_marks``; writes JSON to the path in $MATHCOMP_STARTUP_MARKS when the
process ends: the process's start (from /proc), the start and end of pytest_configure (where the plugin
builds the run: settings, dataset, backend, tokenizer, the server's probe), of collection, of the first
case and of its first ``complete`` call (the first prompt sent), the last case's end, the session's
finish (summary and report), and the seconds spent in a few named functions on the way.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import json
import os
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

MARKS: dict[str, float] = {"plugin_imported": time.time()}
SPENT: dict[str, float] = {}
WATCHED = (
    ("mathcomp_tests.backends.completions.backend", "CompletionsBackend._tokenizer", "tokenizer load"),
    ("mathcomp_tests.backends.completions.backend", "CompletionsBackend._served", "server probe (/v1/models)"),
    ("mathcomp_tests.data.scenarios", "load", "dataset read"),
    ("mathcomp_tests.backends", "create", "backend built"),
)
"""(module, attribute path, label): functions whose seconds are summed."""


def _process_start() -> float | None:
    """When this process started (seconds since the epoch), from /proc; None elsewhere."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        stat = Path("/proc/stat").read_text().splitlines()
        boot = next(float(line.split()[1]) for line in stat if line.startswith("btime"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _mark(name: str) -> None:
    MARKS.setdefault(name, time.time())


def _timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[label] = SPENT.get(label, 0.0) + time.perf_counter() - started

    return wrapper


def _watch() -> None:
    for module_name, path, label in WATCHED:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for part in parents:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(label, getattr(owner, name)))
    completions = importlib.import_module("mathcomp_tests.backends.completions.backend")
    complete = completions.CompletionsBackend.complete

    def first_complete(self: Any, *args: Any, **kwargs: Any) -> Any:
        _mark("first_prompt_sent")
        try:
            return complete(self, *args, **kwargs)
        finally:
            _mark("first_answers_back")

    completions.CompletionsBackend.complete = first_complete


@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main() -> Generator[None, None, None]:
    _watch()  # imports the watched modules: their import counts among the imports
    _mark("configure_start")  # pytest_configure (historic) takes no wrapper; the session starts after it
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart() -> None:
    _mark("configure_end")


@pytest.hookimpl(hookwrapper=True)
def pytest_collection() -> Generator[None, None, None]:
    _mark("collection_start")
    yield


def pytest_collection_finish() -> None:
    _mark("collection_end")


def pytest_runtest_setup() -> None:
    _mark("first_case_start")


def pytest_runtest_teardown() -> None:
    MARKS["last_case_end"] = time.time()


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish() -> Generator[None, None, None]:
    _mark("sessionfinish_start")
    yield
    _mark("sessionfinish_end")


def _write() -> None:
    path = os.environ.get("MATHCOMP_STARTUP_MARKS")
    if path:
        MARKS["exit"] = time.time()
        start = _process_start()
        if start is not None:
            MARKS["process_start"] = start
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"marks": MARKS, "spent_s": SPENT}, fh)


atexit.register(_write)


PHASES = (
    ("python, imports and options", "process_start", "configure_start"),
    ("run set-up (settings, dataset, backend, tokenizer, probe)", "configure_start", "configure_end"),
    ("collection", "collection_start", "collection_end"),
    ("collection to the first prompt", "collection_end", "first_prompt_sent"),
    ("the cases, from the first prompt", "first_prompt_sent", "last_case_end"),
    ("session finish (summary, report)", "sessionfinish_start", "sessionfinish_end"),
    ("exit", "sessionfinish_end", "exit"),
)


def phases(written: dict[str, Any]) -> dict[str, Any]:
    """Seconds per phase from what the plugin wrote (a phase whose marks are missing is left out), and the
    seconds in the watched functions."""
    marks = written["marks"]
    out = {
        label: round(marks[end] - marks[start], 3)
        for label, start, end in PHASES
        if start in marks and end in marks
    }
    if "process_start" in marks and "first_prompt_sent" in marks:
        out["before the first prompt"] = round(marks["first_prompt_sent"] - marks["process_start"], 3)
    return {"phases_s": out, "inside_s": {k: round(v, 3) for k, v in written["spent_s"].items()}}
