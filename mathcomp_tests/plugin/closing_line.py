"""The run's own failure as the terminal's very last line, where the tail of a CI log shows it. pytest's
closing line counts outcomes (``4 passed``, ``1 xfailed``) and cannot say that the run failed for a reason
of the suite's own: a pass it did not earn (power required), or a rise only the Holm correction finds at
the end. Then one more line follows it: ``MathComp: NOT EARNED (power required): ...; exit 1``."""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import pytest

from ..verdict.of_run import verdict
from .state import State


def closing_line(summary: Mapping[str, Any] | None, exitstatus: int) -> str | None:
    """The line, or None where pytest's own closing line already tells the outcome."""
    if not summary or exitstatus == pytest.ExitCode.OK or summary.get("shard"):
        return None
    holm = (summary.get("baseline") or {}).get("holm_failures") or []
    unearned = bool((summary.get("power") or {}).get("not_earned"))
    if not (holm or unearned):
        return None
    line = verdict(summary).line
    if holm:
        line += f"; failed under the Holm correction: {'; '.join(holm)}"
    return f"MathComp: {line}; exit {int(exitstatus)}"


class ClosingLine:
    """Registered on the controller (or the only process)."""

    def __init__(self, state: State):
        self.state = state

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None]:
        try:
            return (yield)
        finally:
            line = closing_line(self.state.summary, session.exitstatus)
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            if line is not None and reporter is not None:
                reporter.write_line(line, red=True, bold=True)
