"""The session's own end, tracked: the items selected and the items that reported an outcome, and the
signal or the reason that stopped it (run/summary.py builds summary.json's completeness from them). A CI
timeout sends SIGTERM, a closed terminal (a dropped SSH session) SIGHUP: either ends the session the way
Ctrl-C does (pytest's interrupted path, summary and report written), in the controller and in each xdist
worker, instead of killing the process with nothing written.

Once the session ends (pytest_sessionfinish, to the end of pytest_unconfigure) those signals and Ctrl-C are
held instead: the end writes summary.json, reports/latest, the baseline, report.html and the table whole,
then says in one line that a signal came, and the run exits as pytest's INTERRUPTED. Raised there, the
signal left a traceback and the files of a finished run unwritten. The end only writes files (each replaced
atomically) and prints: an end that hangs is stopped by SIGQUIT (Ctrl-\\) or SIGKILL."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

from .. import summary_format

STOPPING = {signal.SIGTERM: "SIGTERM (as a CI timeout sends it)", signal.SIGHUP: "SIGHUP (a closed terminal)"}
"""The signals that end a session as Ctrl-C does, and how its reason names each."""
HELD = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}
"""The signals held while the session ends, and how the end's line names each."""


class Tracker:
    """Registered as a plugin on the controller (or the only process) and on each xdist worker."""

    def __init__(self) -> None:
        self.selected: set[str] | None = None
        """Node ids selected after -k, -m and --deselect; None until collection ends (xdist: per worker)."""
        self.reported: set[str] = set()
        """Node ids whose outcome was reported (a call, or a setup that failed or skipped)."""
        self.failed: set[str] = set()
        """Node ids pytest failed or errored in any phase (a known failure under --fail-on=new is an xfail)."""
        self.signal: str | None = None
        """How the reason names the signal that stopped the session (see STOPPING)."""
        self.held: list[str] = []
        """The signals that came while the session ended, by HELD's names."""
        self._previous: dict[signal.Signals, Any] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected = {item.nodeid for item in session.items}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """On the xdist controller, which collects nothing itself: every worker's collection."""
        self.selected = (self.selected or set()) | set(ids)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.reported.add(report.nodeid)
        if report.failed:
            self.failed.add(report.nodeid)

    def stopped(self, session: pytest.Session) -> str | None:
        """Why the session ended before its end, in one sentence; None when it ran to the end."""
        if self.signal:
            return f"the run was stopped by {self.signal} before every case ended"
        if session.shouldstop:
            return f"the run stopped early: {session.shouldstop}"
        if session.exitstatus == pytest.ExitCode.INTERRUPTED:
            return "the run was interrupted (Ctrl-C) before every case ended"
        if session.shouldfail:
            return f"the run stopped early: {session.shouldfail}"
        return None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None]:
        """Every plugin's end (ours, pytest-html's, the terminal's table) runs with the signals held."""
        self.hold()
        try:
            return (yield)
        finally:
            if self.held:
                session.exitstatus = pytest.ExitCode.INTERRUPTED
                self._say(session.config)

    def _say(self, config: pytest.Config) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or hasattr(config, "workerinput"):
            return
        reporter.write_line(
            f"MathComp: {' then '.join(self.held)} came while the run's end was written: it was finished first, "
            "every file whole (summary.json, reports/latest, the baseline, report.html); the run exits as "
            "interrupted",
            yellow=True,
        )

    def hold(self) -> None:
        """From now on Ctrl-C, SIGTERM and SIGHUP are noted, not raised (see the module's docstring)."""
        for signum in HELD:
            try:
                current = signal.getsignal(signum)
                if current != signal.SIG_IGN:
                    self._previous.setdefault(signum, current)
                    signal.signal(signum, self._on_held)
            except ValueError:  # not the main thread: leave the signals alone
                return

    def _on_held(self, signum: int, frame: FrameType | None) -> None:
        self.held.append(HELD[signal.Signals(signum)])

    def install(self) -> None:
        """SIGTERM and SIGHUP raise KeyboardInterrupt, as Ctrl-C does (only from the main thread, where
        Python delivers signals). A signal the process was started to ignore (``nohup``) stays ignored."""
        for signum in STOPPING:
            try:
                if signal.getsignal(signum) != signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._on_signal)
            except ValueError:  # not the main thread: leave the signals alone
                return

    def uninstall(self) -> None:
        for signum, previous in self._previous.items():
            if previous is not None:  # None: a handler set outside Python, which cannot be put back
                with contextlib.suppress(ValueError):
                    signal.signal(signum, previous)
        self._previous = {}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is None:
            self.signal = STOPPING[signal.Signals(signum)]
            raise KeyboardInterrupt(signal.Signals(signum).name)


def write_incomplete(tr: Any, summary: dict[str, Any] | None) -> bool:
    """INCOMPLETE and its reasons, first in the end-of-run section; True when the run is incomplete."""
    if not summary_format.is_incomplete(summary):
        return False
    tr.write_sep("=", "MathComp: INCOMPLETE (this run cannot pass)", red=True, bold=True)
    for reason in summary_format.incomplete_reasons(summary) or ["the run did not say why"]:
        tr.write_line(f"INCOMPLETE: {reason}", red=True)
    return True
