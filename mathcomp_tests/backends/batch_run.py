"""Answers by batch: resume the batches earlier runs created, send the rest in as few batches as the
limits allow, wait for them (bounded), store each answer in the response cache, resend what a batch did
not answer.

Every batch is recorded (batch_records.py) as soon as the provider created it, so a run killed while it
waits, or the next night's, collects it instead of paying twice. A request a batch answered with an error,
and the requests an expired or cancelled batch left unanswered, are sent again in a later batch, each at
most ``1 + rounds`` times in a run; then they are failed requests (item errors), never answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..types import Response
from .base import ServerGoneError, redact
from .batch_api import BatchAPI, BatchState, Pricing, split
from .batch_records import BatchRecord, BatchRecords

Store = Callable[[list[tuple[str, Response]]], None]
"""Takes the answers of one output file (cache key, Response) as they are read."""
Say = Callable[[str], None]
RETRIEVE_FAILURES = 10
"""Failed status checks in a row after which the provider counts as gone."""


class BatchWaitError(ServerGoneError):
    """--batch-wait ran out with batches still running: the run ends INCOMPLETE; the next one resumes them."""


@dataclass
class Outcome:
    """What the batches did for one call."""

    answered: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)
    """Cache key -> the error of a request no batch answered (after every resend)."""
    created: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    requests_sent: int = 0
    cost_usd: float = 0.0
    """What the answers collected cost at the batch price (where the price is known)."""
    live_cost_usd: float = 0.0
    """What the same answers would have cost as live requests."""


class Batcher:
    """One model's batches, for the whole run: the wait is counted from the batcher's creation."""

    def __init__(
        self,
        api: BatchAPI,
        records: BatchRecords,
        owner: str,
        price: Pricing,
        store: Store,
        *,
        wait: float | None,
        poll: float,
        rounds: int,
        resend_failed: bool,
        say: Say,
    ):
        self.api, self.records, self.owner, self.price, self.store = api, records, owner, price, store
        self.wait, self.poll, self.rounds, self.resend_failed, self.say = wait, poll, rounds, resend_failed, say
        self.started = time.monotonic()
        self.retrieve_failures = 0
        self.total = Outcome()
        """Everything done by batch in this run (summed over calls)."""

    async def answer(self, lines: dict[str, bytes]) -> Outcome:
        """Every key of ``lines`` answered into the store, or failed, or BatchWaitError.

        Open batches of earlier runs are collected first (whatever they hold: they are paid for)."""
        outcome = Outcome()
        tracked: dict[str, BatchRecord] = {}
        for record in self.records.open(self.owner):
            tracked[record.id] = record
            outcome.resumed.append(record.id)
            self.say(f"batch {record.id}: resumed ({len(record.keys)} requests, created by an earlier run)")
        in_flight = {k for r in tracked.values() for k in r.keys}
        sends: dict[str, int] = {}
        try:
            await self._create([k for k in lines if k not in in_flight], lines, tracked, sends, outcome)
            shown: dict[str, str] = {}
            while tracked:
                again: list[str] = []
                for batch_id, record in list(tracked.items()):
                    state = await self._retrieve(batch_id)
                    if state is None:
                        continue
                    if shown.get(batch_id) != state.line():
                        shown[batch_id] = state.line()
                        self.say(state.line())
                    if state.done:
                        del tracked[batch_id]
                        again += await self._collect(record, state, lines, sends, outcome)
                if again:
                    await self._create(again, lines, tracked, sends, outcome)
                if tracked and self.wait is not None and time.monotonic() - self.started >= self.wait:
                    raise BatchWaitError(
                        f"--batch-wait={self.wait:g}s ran out with {len(tracked)} batch(es) still running "
                        f"({', '.join(tracked)}); the next run collects them without sending their prompts again"
                    )
                if tracked:
                    await asyncio.sleep(self.poll)
        finally:
            for key in outcome.answered:
                outcome.failed.pop(key, None)
            self._add(outcome)
        return outcome

    async def _retrieve(self, batch_id: str) -> BatchState | None:
        """The batch's state; None after a failed look (retried at the next poll), ServerGoneError after
        RETRIEVE_FAILURES in a row (the batches stay recorded: the next run resumes them)."""
        try:
            state = await self.api.retrieve(batch_id)
        except Exception as exc:  # a provider error or a lost connection: look again later
            self.retrieve_failures += 1
            what = redact(f"{type(exc).__name__}: {exc}")[:500]
            if self.retrieve_failures >= RETRIEVE_FAILURES:
                raise ServerGoneError(
                    f"--batch: {self.retrieve_failures} status checks in a row failed (last: {what}); the batches "
                    "stay recorded in the cache folder and the next run resumes them"
                ) from exc
            self.say(f"batch {batch_id}: status check failed ({what}); checking again")
            return None
        self.retrieve_failures = 0
        return state

    async def _create(
        self,
        keys: list[str],
        lines: dict[str, bytes],
        tracked: dict[str, BatchRecord],
        sends: dict[str, int],
        outcome: Outcome,
    ) -> None:
        """Send ``keys`` in as few batches as the limits allow; each recorded before anything waits on it."""
        if not keys:
            return
        for part in split([lines[k] for k in keys], self.api.max_requests, self.api.max_bytes):
            chosen = [keys[n] for n in part]
            file_id, state = await self.api.create(b"".join(lines[k] for k in chosen))
            tracked[state.id] = self.records.add(state.id, file_id, self.owner, chosen)
            for key in chosen:
                sends[key] = sends.get(key, 0) + 1
            outcome.created.append(state.id)
            outcome.requests_sent += len(chosen)
            self.say(f"batch {state.id}: created with {len(chosen)} requests")

    async def _collect(
        self,
        record: BatchRecord,
        state: BatchState,
        lines: dict[str, bytes],
        sends: dict[str, int],
        outcome: Outcome,
    ) -> list[str]:
        """Store a finished batch's answers; the keys to send again (failed, or left unanswered)."""
        got = await self.api.answers(state, self.price)
        answers = [(k, r) for k, r in got if r.error is None]
        self.store(answers)
        answered = {k for k, _ in answers}
        for _, response in answers:
            cost, live = response.meta.get("cost"), response.meta.get("live_cost")
            if isinstance(cost, float) and isinstance(live, float):
                outcome.cost_usd += cost
                outcome.live_cost_usd += live
        outcome.answered |= answered
        errors = {k: str(r.error) for k, r in got if r.error is not None and k not in answered}
        self.records.close(record, state.status)
        unanswered = [k for k in record.keys if k not in answered and k not in errors]
        if state.status != "completed":
            self.say(
                f"batch {state.id} {state.status}: {len(unanswered) + len(errors)} of its {len(record.keys)} "
                "requests unanswered, sent again"
            )
        for key in unanswered:
            errors.setdefault(key, f"batch {state.id} {state.status} before answering it")
        outcome.failed.update(errors)
        resend = [k for k in errors if k in lines and (self.resend_failed or state.status != "completed")]
        return [k for k in resend if sends.get(k, 0) <= self.rounds]

    def _add(self, outcome: Outcome) -> None:
        total = self.total
        total.answered |= outcome.answered
        total.failed = {**{k: v for k, v in total.failed.items() if k not in outcome.answered}, **outcome.failed}
        total.created += outcome.created
        total.resumed += outcome.resumed
        total.requests_sent += outcome.requests_sent
        total.cost_usd += outcome.cost_usd
        total.live_cost_usd += outcome.live_cost_usd
