"""Answers by batch: resume the batches earlier runs created, send the rest in as few batches as the
limits allow, wait for them (bounded), store each answer in the response cache, resend what a batch did
not answer.

Every batch is recorded (batch_records.py) as soon as the provider created it, so a run killed while it
waits, or the next night's, collects it instead of paying twice. A request a batch answered with an error,
and the requests an expired, cancelled or failed batch left unanswered, are sent again in a later batch,
each at most ``1 + rounds`` times in a run (with --batch-fallback=live, none: they are asked live); then
they are failed requests (item errors), never answers.

A result line is used only for a request its batch held, and only once: a line that is not a result, a
second result for the same request (the first is kept) and a result for a request the batch never held
are each said in one line and not stored. Results that cannot be read (gone, refused) are tried again at
the next poll; after ``READ_TRIES`` failures the run stops INCOMPLETE with the batch still recorded, and
the run that fails to read them for the ``UNREAD_RUNS``-th time sends the batch's prompts again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..types import Response
from .base import BackendError, ServerGoneError
from .batch_api import BatchAPI, BatchState, Pricing, Result, Results, shown, split
from .batch_records import BatchRecord, BatchRecords
from .secrets import redact

Store = Callable[[list[tuple[str, Response]]], None]
"""Takes the answers of one output file (cache key, Response) as they are read."""
Say = Callable[[str], None]
RETRIEVE_FAILURES = 10
"""Failed status checks in a row after which the provider counts as gone."""
READ_TRIES = 3
"""Failed reads in a row of a finished batch's results after which the run stops (the batch stays recorded)."""
UNREAD_RUNS = 2
"""Runs that could not read a batch's results after which they count as gone: its prompts are sent again."""


class BatchWaitError(ServerGoneError):
    """--batch-wait ran out with batches still running: the run ends INCOMPLETE; the next one resumes them."""


class BatchReadError(ServerGoneError):
    """A finished batch's results could not be read: the run ends INCOMPLETE; the next one tries again."""


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
        self.read_failures: dict[str, int] = {}
        """Batch id -> failed reads of its results in a row, in this run."""
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
            said: dict[str, str] = {}
            while tracked:
                again: list[str] = []
                for batch_id, record in list(tracked.items()):
                    state = await self._retrieve(batch_id)
                    if state is None:
                        continue
                    if said.get(batch_id) != state.line():
                        said[batch_id] = state.line()
                        self.say(state.line())
                    if state.done:
                        read = await self._read(record, state)
                        if read is None:
                            continue
                        del tracked[batch_id]
                        again += self._collect(*read, lines, sends, outcome)
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

    async def _read(
        self, record: BatchRecord, state: BatchState
    ) -> tuple[BatchRecord, BatchState, Results, str] | None:
        """A finished batch's results (with the why of a batch that failed as a whole); None after a failed
        read (tried again at the next poll); BatchReadError after READ_TRIES in a row, unless this is the
        UNREAD_RUNS-th run that could not read them: then no results, and the batch `unreadable`."""
        try:
            results = await self.api.answers(state, self.price)
        except Exception as exc:  # BackendError from the provider boundary; anything else is read the same
            what = shown(exc if isinstance(exc, BackendError) else f"{type(exc).__name__}: {exc}", 500)
            tries = self.read_failures[state.id] = self.read_failures.get(state.id, 0) + 1
            if tries < READ_TRIES:
                return None
            del self.read_failures[state.id]
            record = replace(record, unread_runs=record.unread_runs + 1)
            self.records.save(record)
            if record.unread_runs < UNREAD_RUNS:
                raise BatchReadError(
                    f"batch {state.id}: its results could not be read ({tries} tries, last: {what}); the batch "
                    "stays recorded and the next run tries again"
                ) from exc
            why = f"its results could not be read in {record.unread_runs} runs (last: {what})"
            return record, replace(state, status="unreadable"), Results(), why
        self.read_failures.pop(state.id, None)
        return record, state, results, f"the provider says: {state.errors}" if state.errors else ""

    def _usable(self, record: BatchRecord, results: Results) -> dict[str, Response]:
        """The results of the requests the batch held, the first of each; every other line said."""
        for line in results.unreadable:
            self.say(line)
        held = set(record.keys)
        first: dict[str, Result] = {}
        for result in results.found:
            if result.key not in held:
                self.say(
                    f"{result.where}: a result for a request this batch did not hold "
                    f"({shown(result.key, 80)!r}), ignored"
                )
            elif result.key in first:
                earlier = first[result.key].where.rsplit(": ", 1)[-1]
                self.say(
                    f"{result.where}: a second result for request {result.key[:16]}... ({earlier} has the first), "
                    "ignored: the first is kept"
                )
            else:
                first[result.key] = result
        return {key: result.response for key, result in first.items()}

    def _collect(
        self,
        record: BatchRecord,
        state: BatchState,
        results: Results,
        why: str,
        lines: dict[str, bytes],
        sends: dict[str, int],
        outcome: Outcome,
    ) -> list[str]:
        """Store a finished batch's answers; the keys to send again (failed, or left unanswered)."""
        got = list(self._usable(record, results).items())
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
            where = "sent again" if self.resend_failed else "asked live when their case runs"
            self.say(
                f"batch {state.id} {state.status}: {len(unanswered) + len(errors)} of its {len(record.keys)} "
                f"requests unanswered, {where}" + (f"; {why}" if why else "")
            )
        left = f"batch {state.id} {state.status} before answering it" + (f" ({why})" if why else "")
        for key in unanswered:
            errors.setdefault(key, left)
        outcome.failed.update(errors)
        if not self.resend_failed:  # --batch-fallback=live: the cases ask them live, at once, not a later batch
            return []
        return [k for k in errors if k in lines and sends.get(k, 0) <= self.rounds]

    def _add(self, outcome: Outcome) -> None:
        total = self.total
        total.answered |= outcome.answered
        total.failed = {**{k: v for k, v in total.failed.items() if k not in outcome.answered}, **outcome.failed}
        total.created += outcome.created
        total.resumed += outcome.resumed
        total.requests_sent += outcome.requests_sent
        total.cost_usd += outcome.cost_usd
        total.live_cost_usd += outcome.live_cost_usd
