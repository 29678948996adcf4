"""--batch before the first case: every prompt of the selected cases that the cache cannot answer goes to the
provider's batches (a protocol's later turns round by round: batch_turns.py), and the run waits (bounded
by --batch-wait) until they are answered into the cache; the cases then read them as cached answers.
When the wait runs out the session stops before any case (INCOMPLETE: the run cannot pass) and the next
run resumes the same batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from ..backends.base import BackendError
from ..backends.batch_run import BatchWaitError, Outcome
from ..run import Run
from ..types import Condition
from .batch_turns import Case, prefetch_turns

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
        self.outcome: Outcome | None = None
        """Everything sent and collected by batch (before the cases and during them)."""
        self.pricing = ""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if session.config.option.collectonly or not session.items:
            return
        from ..backends.batch_backend import BatchBackend

        backend = getattr(self.run.backend, "inner", None)
        if not isinstance(backend, BatchBackend):
            return
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            backend.say = lambda line: terminal.write_line(f"mathcomp --batch: {line}")
        try:
            prefetch_turns(backend, selected_cases(self.run, session.items), self.run.kit)
        except (BatchWaitError, BackendError) as exc:  # the wait ran out, or the provider is gone
            session.shouldstop = str(exc)
            raise session.Interrupted(str(exc)) from exc
        finally:
            self.outcome, self.pricing = backend.batcher.total, backend.price.source
        if self.outcome.answered:
            backend.say(cost_line(self.outcome, self.pricing))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """In an xdist worker: what it did by batch travels to the controller with the worker's output."""
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[WORKER_OUTPUT] = summary(self)


class WorkerBatches:
    """Registered in the xdist controller: what each worker did by batch, for summary.json's `batch`."""

    def __init__(self) -> None:
        self.parts: list[dict[str, Any]] = []

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        part = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if part is not None:
            self.parts.append(part)


def selected_cases(run: Run, items: Sequence[pytest.Item]) -> list[Case]:
    """Every selected case of test_framing and test_generated, once: its condition, prompts and decodings."""
    out: list[Case] = []
    seen: set[tuple[Condition, bool]] = set()
    for item in items:
        test = getattr(item, "originalname", "")
        condition = getattr(getattr(item, "callspec", None), "params", {}).get("condition")
        if test not in BATCHED_TESTS or not isinstance(condition, Condition):
            continue
        generated = test == "test_generated"
        if (condition, generated) in seen:
            continue
        seen.add((condition, generated))
        prompts = run.prompts_for(condition, run.generated if generated else None)
        out.append((condition, prompts, run.decodings(condition)))
    return out


def cost_line(outcome: Outcome, pricing: str) -> str:
    """What the answers collected by batch cost, and what the batch path saved against live requests."""
    n = len(outcome.answered)
    if not outcome.live_cost_usd:
        return f"{n} answers by batch; batch price: {pricing}"
    saved = outcome.live_cost_usd - outcome.cost_usd
    return (
        f"{n} answers by batch cost ${outcome.cost_usd:.6f} ({pricing}); ${saved:.6f} saved against "
        f"${outcome.live_cost_usd:.6f} live"
    )


def summary(phase: Any) -> dict[str, Any] | None:
    """summary.json's `batch`: what this process (or, in the xdist controller, its workers together) sent
    and collected by batch; None without --batch."""
    if isinstance(phase, WorkerBatches):
        return added(phase.parts)
    outcome = getattr(phase, "outcome", None)
    if outcome is None:
        return None
    known = bool(outcome.live_cost_usd)
    return {
        "batches_created": list(outcome.created),
        "batches_resumed": list(outcome.resumed),
        "requests_sent": outcome.requests_sent,
        "answered": len(outcome.answered),
        "failed": len(outcome.failed),
        "pricing": phase.pricing,
        "cost_usd": outcome.cost_usd if known else None,
        "live_cost_usd": outcome.live_cost_usd if known else None,
        "saved_usd": outcome.live_cost_usd - outcome.cost_usd if known else None,
    }


def added(parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The workers' `batch` sections as one: batches listed once, counts and costs summed (a cost is null
    when a worker that collected answers could not price them, as in one process)."""
    if not parts:
        return None
    total: dict[str, Any] = {
        "batches_created": [b for p in parts for b in p["batches_created"]],
        "batches_resumed": sorted(
            {b for p in parts for b in p["batches_resumed"]}
            - {b for p in parts for b in p["batches_created"]}
        ),
        "pricing": next((p["pricing"] for p in parts if p["pricing"]), ""),
    }
    for count in ("requests_sent", "answered", "failed"):
        total[count] = sum(int(p[count]) for p in parts)
    paid = [p for p in parts if p["answered"]]  # a worker that collected nothing has no price to say
    for cost in ("cost_usd", "live_cost_usd", "saved_usd"):
        values = [p[cost] for p in paid]
        total[cost] = None if not values or any(v is None for v in values) else sum(values)
    return total
