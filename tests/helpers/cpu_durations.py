"""`--cpu-durations=N`: the N tests that spent the most CPU, as `--durations` lists the slowest by the clock.

Under xdist a test's wall time is mostly its wait for the other workers' load; its CPU is what it costs. Each
test is charged, from its setup to its teardown, the CPU (user and system) of its worker ("own"), of the
processes it started and waited for ("started") and of the suite runs forked for it from the warm parent
("forked", helpers/warm_runs.py). A process a fixture keeps for several tests is charged to the test whose
teardown ends it. Each worker sends a test's numbers to the controller with its teardown report."""

from __future__ import annotations

import resource
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import cast

import pytest

from helpers import warm_runs

KEY = "cpu_seconds"
_START = pytest.StashKey[tuple[float, float, float]]()


@dataclass
class Spent:
    """One test's CPU seconds."""

    nodeid: str
    own: float
    started: float
    forked: float

    @property
    def total(self) -> float:
        return self.own + self.started + self.forked


@dataclass
class Ledger:
    """The tests' CPU, gathered where the reports arrive (the controller under xdist) and listed at the end."""

    top: int
    spent: list[Spent] = field(default_factory=list)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            for name, value in report.user_properties:
                if name == KEY:
                    own, started, forked = cast("list[float]", value)
                    self.spent.append(Spent(report.nodeid, own, started, forked))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.spent:
            return
        write = terminalreporter.write_line
        terminalreporter.section(f"{self.top} tests that spent the most CPU (seconds, user + system)")
        write(f"{'total':>8} {'own':>7} {'started':>7} {'forked':>7}  test")
        for s in sorted(self.spent, key=lambda s: -s.total)[: self.top]:
            write(f"{s.total:8.2f} {s.own:7.2f} {s.started:7.2f} {s.forked:7.2f}  {s.nodeid}")
        own, started, forked = (sum(getattr(s, k) for s in self.spent) for k in ("own", "started", "forked"))
        write(f"{own + started + forked:8.2f} {own:7.2f} {started:7.2f} {forked:7.2f}  all {len(self.spent)} tests")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-durations", type=int, default=0, metavar="N",
        help="list the N tests that spent the most CPU, with all tests' sum (default 0: none)",
    )  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    top = config.getoption("--cpu-durations")
    if top and not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Ledger(top), "cpu-durations-ledger")


def _now() -> tuple[float, float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    started = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, started.ru_utime + started.ru_stime, warm_runs.forked_cpu()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if item.config.getoption("--cpu-durations"):
        item.stash[_START] = _now()
    return (yield)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        start = item.stash.get(_START, None)
        if start is not None:
            item.user_properties.append((KEY, [b - a for a, b in zip(start, _now(), strict=True)]))
