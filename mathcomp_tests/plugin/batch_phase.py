"""--batch before the first case: the selected cases handed to the run (``Run.prefetch``), which asks every
prompt the cache cannot answer by batch (a protocol's later turns round by round: run/prefetch.py) and
waits (bounded by --batch-wait) until they are answered into the cache; the cases then read them as cached
answers. When the run must stop (the wait ran out, results or a batch record unreadable, the provider
gone) the session stops before any case, INCOMPLETE in one line, and the next run resumes the same batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ..backends.base import BackendError
from ..backends.batch.outcome import BatchSummary
from ..run.orchestrator import Run
from ..types import Condition

BATCHED_TESTS = ("test_framing", "test_generated")
"""Suite tests whose cases are asked by batch before the first case."""
WORKER_OUTPUT = "mathcomp_batch"
"""The key of an xdist worker's `batch` summary in the output it sends the controller."""


def check(run: Run) -> None:
    """--batch names an API model: any other is a usage error, not a silently live run."""
    from ..settings import SelectionError

    if run.settings.backend.batch is not None and run.spec.kind != "api":
        raise SelectionError(
            "--batch applies only to an API model (openai/<name>, anthropic/<name>), and "
            f"--model={run.spec.given} is {run.spec.kind}; drop --batch"
        )


class BatchPhase:
    """Registered in the process that runs the cases (the only one, or each xdist worker)."""

    def __init__(self, run: Run):
        self.run = run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if session.config.option.collectonly or not session.items:
            return
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")

        def say(line: str) -> None:
            if terminal is not None:
                terminal.write_line(f"mathcomp --batch: {line}")

        try:
            self.run.prefetch(selected_cases(session.items), say)
        except BackendError as exc:  # every stop of the batch code: the wait, a download, a record, the provider
            session.shouldstop = str(exc)
            raise session.Interrupted(str(exc)) from exc
        done = self.run.batching.summary()
        if done is not None and done.answered:
            say(cost_line(done))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """In an xdist worker: what it did by batch travels to the controller with the worker's output."""
        workeroutput = getattr(session.config, "workeroutput", None)
        done = self.run.batching.summary()
        if workeroutput is not None and done is not None:
            workeroutput[WORKER_OUTPUT] = done.as_dict()


class WorkerBatches:
    """Registered in the xdist controller: what each worker did by batch, handed to the run."""

    def __init__(self, run: Run) -> None:
        self.run = run

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        part = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if part is not None:
            self.run.batching.add(BatchSummary.from_dict(part))


def selected_cases(items: Sequence[pytest.Item]) -> list[tuple[Condition, bool]]:
    """Every selected case of test_framing and test_generated, once: (its condition, generated)."""
    out: dict[tuple[Condition, bool], None] = {}
    for item in items:
        test = getattr(item, "originalname", "")
        condition = getattr(getattr(item, "callspec", None), "params", {}).get("condition")
        if test in BATCHED_TESTS and isinstance(condition, Condition):
            out[(condition, test == "test_generated")] = None
    return list(out)


def cost_line(done: BatchSummary) -> str:
    """What the answers collected by batch cost, and what the batch path saved against live requests."""
    if done.cost_usd is None or done.live_cost_usd is None or done.saved_usd is None:
        return f"{done.answered} answers by batch; batch price: {done.pricing}"
    return (
        f"{done.answered} answers by batch cost ${done.cost_usd:.6f} ({done.pricing}); ${done.saved_usd:.6f} "
        f"saved against ${done.live_cost_usd:.6f} live"
    )
