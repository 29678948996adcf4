"""What the plugin keeps per process: the run, every case's summary as its report arrives (plain JSON, so
that it survives xdist), and the item that runs next (its case can be asked ahead)."""

from __future__ import annotations

import shutil
import warnings
from typing import Any

import pytest

from ..backends.base import ServerLeftWarning
from ..backends.secrets import redact
from ..data.generated_draw import GENERATED_PREFIX
from ..records import items as records
from ..run.orchestrator import Run
from ..settings import conditions
from ..types import Condition
from ..verdict.narrowing import GATED, item_key
from . import properties

PROPERTY = "mathcomp"
GENERATED_PROPERTY = "mathcomp-generated"
REVEAL_PROPERTY = "mathcomp-reveal-after"


class State:
    """Per-process state, registered as a plugin: the run, and every case's summary reported so far,
    one per case id (a case run again, by --dist=each or a rerun, replaces its earlier summary);
    test_generated's cases apart, under ``generated:<id>``."""

    def __init__(self, run: Run):
        self.run = run
        self.by_case: dict[str, dict[str, Any]] = {}
        self.by_generated: dict[str, dict[str, Any]] = {}
        self.summary: dict[str, Any] | None = None
        self.records: list[dict[str, Any]] = []
        """results.jsonl once merged at the session's end: read once for the summary and the report."""
        self.notes: list[str] = []
        self.conditions = {c.id: c for c in conditions(run.settings)}
        self.reveal_after: dict[str, dict[str, Any]] = {}
        self.abandoned = False
        """True when the run stopped on a usage error after its folder was made: the folder is removed."""
        self.next_item: pytest.Item | None = None
        """The item pytest runs after the current one (in this process): its case can be asked ahead."""
        self.servers_left: list[str] = []
        """Each server of several that went away during the run (its ServerLeftWarning), once, in order."""

    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage) -> None:
        """Keep a server's departure, from this process or (under xdist) a worker's, for the end of the run."""
        if issubclass(warning_message.category, ServerLeftWarning):
            text = redact(str(warning_message.message))
            if text not in self.servers_left:
                self.servers_left.append(text)

    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self.next_item = nextitem

    def ask_next(self) -> None:
        """Start asking the next item's case while this one runs, where the backend allows it."""
        test = getattr(self.next_item, "originalname", "")
        params = getattr(getattr(self.next_item, "callspec", None), "params", {})
        if test in GATED and isinstance(params.get("condition"), Condition):
            self.run.ask_ahead(params["condition"], generated=test == "test_generated")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.abandoned and not hasattr(config, "workerinput"):
            shutil.rmtree(self.run.run_dir, ignore_errors=True)

    @property
    def cases(self) -> list[dict[str, Any]]:
        """test_framing's case summaries, in the order of the matrix."""
        return self._ordered(self.by_case, "")

    @property
    def generated_cases(self) -> list[dict[str, Any]]:
        """test_generated's case summaries (ids ``generated:<id>``), in the order of the matrix."""
        return self._ordered(self.by_generated, GENERATED_PREFIX)

    def _ordered(self, by_case: dict[str, dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
        order = {prefix + case_id: i for i, case_id in enumerate(self.conditions)}
        return sorted(by_case.values(), key=lambda c: order.get(c["case"], len(order)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reveal = properties.read(report, REVEAL_PROPERTY)
        if reveal is not None and report.when == "call":
            self.reveal_after[reveal["case"]] = dict(reveal)
        for property_, by_case in ((PROPERTY, self.by_case), (GENERATED_PROPERTY, self.by_generated)):
            summary = case_summary(report, property_)
            if summary is not None:
                if report.when == "call":
                    by_case[summary["case"]] = summary
                return
        test, case_id = split_node_id(report.nodeid)
        if report.failed and case_id in self.conditions and report.when in ("setup", "call"):
            errored = records.errored_case(self.conditions[case_id], error_text(report))
            if test == "test_framing":
                self.by_case[case_id] = errored
            else:
                self.by_generated[GENERATED_PREFIX + case_id] = {**errored, "case": GENERATED_PREFIX + case_id}


STATE = pytest.StashKey[State]()
"""Where the config keeps this process's State."""


def split_node_id(nodeid: str) -> tuple[str, str | None]:
    """The test and the condition id in a gated case's node id (`...::test_framing[<id>]`; None for any other)."""
    test, case_id = item_key(nodeid)
    return test, case_id if test in GATED else None


def error_text(report: pytest.TestReport) -> str:
    """What a case that raised says: the exception's own line, secrets removed."""
    crash = getattr(report.longrepr, "reprcrash", None)
    lines = report.longreprtext.strip().splitlines()
    text = getattr(crash, "message", None) or (lines[-1] if lines else "error")
    return redact(str(text))[:2000]


def case_summary(report: pytest.TestReport, property_: str = PROPERTY) -> dict[str, Any] | None:
    """The case summary a suite item's report carries under ``property_`` (None for any other item)."""
    value = properties.read(report, property_)
    return None if value is None else dict(value)
