"""A progress bar per case (prompts done / total, rate, time left), drawn by tqdm on a terminal only.

Hooked as the ``on_response`` callback every backend calls as each response arrives. Shown only when
pytest writes to a terminal, is not run with ``-q``, is not in CI (``$CI``) and is not an xdist worker,
and only for a case still running after ``DELAY`` seconds: a run answered from the cache prints nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from ..backends.base import OnResponse
from ..types import Response

DELAY = 1.0
DELAY_VARIABLE = "MATHCOMP_PROGRESS_DELAY"
"""Seconds a case runs before its bar appears, when this variable sets them (default DELAY)."""
"""Seconds a case runs before its bar appears."""


def wanted(config: pytest.Config) -> bool:
    """Whether this process may draw bars at all (the terminal itself is checked per case)."""
    return (
        config.get_verbosity() >= 0
        and not hasattr(config, "workerinput")
        and not os.environ.get("CI")
        and os.environ.get("TERM") != "dumb"
    )


class _Terminal:
    """A file for tqdm that writes past pytest's output capture, starting on a line of its own."""

    def __init__(self, capture: Any, encoding: str):
        self._capture = capture
        self._started = False
        self.encoding = encoding

    def write(self, text: str) -> None:
        if not text:
            return
        with self._capture.global_and_fixture_disabled():
            if not self._started:
                sys.stderr.write("\n")
                self._started = True
            sys.stderr.write(text)
            sys.stderr.flush()

    def flush(self) -> None:
        """Every write flushes already."""


def _terminal(capture: Any) -> tuple[int, str] | None:
    """The real stderr's width and encoding when it is a terminal (looked at with capture suspended)."""
    with capture.global_and_fixture_disabled():
        if not sys.stderr.isatty():
            return None
        return shutil.get_terminal_size().columns, sys.stderr.encoding or "utf-8"


@contextmanager
def case_bar(config: pytest.Config, case_id: str, total: int) -> Iterator[OnResponse | None]:
    """An ``on_response`` callback advancing a bar for one case, or None where no bar is wanted."""
    capture = config.pluginmanager.getplugin("capturemanager")
    terminal = _terminal(capture) if wanted(config) and capture is not None else None
    if terminal is None:
        yield None
        return
    columns, encoding = terminal
    from tqdm import tqdm

    bar = tqdm(
        total=total,
        desc=case_id,
        unit="prompt",
        file=_Terminal(capture, encoding),
        delay=float(os.environ.get(DELAY_VARIABLE) or DELAY),
        mininterval=0.5,
        ncols=max(40, columns - 1),
        leave=True,
    )

    def advance(index: int, response: Response) -> None:
        bar.update(1)

    try:
        yield advance
    finally:
        bar.close()
