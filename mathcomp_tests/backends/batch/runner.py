"""Answers by batch, whichever provider: resume the batches earlier runs created, send the rest in as few
batches as the limits allow, wait for them (bounded), store each answer through the response cache,
resend what a batch did not answer.

Every batch is recorded (submissions.py) as soon as the provider created it, so a run killed while it waits, or
the next night's, collects it instead of paying twice. A request a batch answered with an error, and the
requests an expired, cancelled or failed batch left unanswered, are sent again in a later batch, each at
most ``1 + rounds`` times in a run (with --batch-fallback=live, none: they are asked live); then they are
failed requests (item errors), never answers. A request the live call would refuse (Unsendable) is one.

A result line is used only for a request its batch held, and only once: a line that is not a result, a
second result for the same request (the first is kept) and a result for a request the batch never held
are each said in one line and not stored. A failed status check and a failed download are each said in
one line and tried again at the next check: after ``RETRIEVE_FAILURES`` failed checks in a row the provider
counts as gone; after ``READ_TRIES`` failed downloads in a row the run stops INCOMPLETE with the batch still
recorded, and the run that fails to read them for the ``UNREAD_RUNS``-th time sends the batch's prompts again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ...types import Response
from ..base import BackendError, ServerGoneError
from .outcome import Outcome
from .pricing import Pricing
from .protocol import (
    BatchAPI,
    BatchReadError,
    BatchRequest,
    BatchState,
    BatchStatus,
    BatchStoreError,
    BatchWaitError,
    Result,
    Results,
    Unsendable,
    shown,
)
from .submissions import Submission, Submissions

Store = Callable[[list[tuple[str, Response]]], None]
"""Takes the answers of one batch (cache key, Response) as they are read: the response cache."""
Say = Callable[[str], None]
RETRIEVE_FAILURES = 10
"""Failed status checks in a row after which the provider counts as gone."""
READ_TRIES = 3
"""Failed reads in a row of a finished batch's results after which the run stops (the batch stays recorded)."""
UNREAD_RUNS = 2
"""Runs that could not read a batch's results after which they count as gone: its prompts are sent again."""
Read = tuple[Submission, BatchState, Results, str, str]
"""A finished batch read: its submission, state, results, why it answered less, and the outcome its
submission keeps."""


def split(sizes: Sequence[int], max_requests: int, max_bytes: int) -> list[list[int]]:
    """The indexes of requests of ``sizes`` bytes cut into as few batches as the limits allow, in order."""
    out: list[list[int]] = []
    size = 0
    for n, length in enumerate(sizes):
        if not out or len(out[-1]) >= max_requests or size + length > max_bytes:
            out.append([])
            size = 0
        out[-1].append(n)
        size += length
    return out


class Runner:
    """One model's batches, for the whole run: the wait is counted from the runner's creation."""

    def __init__(
        self,
        api: BatchAPI,
        submissions: Submissions,
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
        self.api, self.submissions, self.owner, self.price, self.store = api, submissions, owner, price, store
        self.wait, self.poll, self.rounds, self.resend_failed, self.say = wait, poll, rounds, resend_failed, say
        self.started = time.monotonic()
        self.retrieve_failures = 0
        self.read_failures: dict[str, int] = {}
        """Batch id -> failed reads of its results in a row, in this run."""
        self.total = Outcome()
        """Everything done by batch in this run (summed over calls)."""
        self.ran = False
        """Whether any call asked the batches (the run then has a `batch` summary)."""

    async def answer(self, requests: dict[str, BatchRequest]) -> Outcome:
        """Every key of ``requests`` answered into the store, or failed, or a BatchError.

        Open batches of earlier runs are collected first (whatever they hold: they are paid for)."""
        self.ran = True
        outcome = Outcome()
        tracked: dict[str, Submission] = {}
        try:
            for submission in self.submissions.open(self.owner):
                tracked[submission.id] = submission
                outcome.resumed.append(submission.id)
                self.say(f"batch {submission.id}: resumed ({len(submission.keys)} requests, created by an earlier run)")
            in_flight = {k for r in tracked.values() for k in r.keys}
            sends: dict[str, int] = {}
            await self._create([k for k in requests if k not in in_flight], requests, tracked, sends, outcome)
            said: dict[str, str] = {}
            while tracked:
                again: list[str] = []
                for batch_id, submission in list(tracked.items()):
                    state = await self._retrieve(batch_id)
                    if state is None:
                        continue
                    if said.get(batch_id) != state.line():
                        said[batch_id] = state.line()
                        self.say(state.line())
                    if state.done:
                        read = await self._read(submission, state)
                        if read is None:
                            continue
                        del tracked[batch_id]
                        again += self._collect(*read, requests, sends, outcome)
                if again:
                    await self._create(again, requests, tracked, sends, outcome)
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
            self.total.add(outcome)
        return outcome

    async def _retrieve(self, batch_id: str) -> BatchState | None:
        """The batch's state; None after a failed look (said; retried at the next poll), ServerGoneError
        after RETRIEVE_FAILURES in a row (the batches stay recorded: the next run resumes them)."""
        try:
            state = await self.api.retrieve(batch_id)
        except BackendError as exc:
            self.retrieve_failures += 1
            what = shown(exc, 500)
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
        requests: dict[str, BatchRequest],
        tracked: dict[str, Submission],
        sends: dict[str, int],
        outcome: Outcome,
    ) -> None:
        """Send ``keys`` in as few batches as the limits allow; each recorded before anything waits on it.
        A request the provider's encoding refuses is a failed request, said once."""
        if not keys:
            return
        sizes: dict[str, int] = {}
        refused: dict[str, str] = {}
        for key in keys:
            try:
                sizes[key] = self.api.size(requests[key])
            except Unsendable as exc:
                refused[key] = str(exc)
        if refused:
            first = next(iter(refused.values()))
            self.say(f"{len(refused)} request(s) cannot be sent, as the live call could not send them: {first}")
            outcome.failed.update(refused)
        keys = [k for k in keys if k in sizes]
        if keys:
            self.submissions.prepare()  # before anything is paid: a batch that cannot be recorded is not created
        for part in split([sizes[k] for k in keys], self.api.max_requests, self.api.max_bytes):
            chosen = [keys[n] for n in part]
            created = await self.api.create([requests[k] for k in chosen])
            tracked[created.state.id] = self.submissions.add(created.state.id, created.extras, self.owner, chosen)
            for key in chosen:
                sends[key] = sends.get(key, 0) + 1
            outcome.created.append(created.state.id)
            outcome.requests_sent += len(chosen)
            self.say(f"batch {created.state.id}: created with {len(chosen)} requests")

    async def _read(self, submission: Submission, state: BatchState) -> Read | None:
        """A finished batch's results (with the why of a batch that failed as a whole); None after a failed
        read (said; tried again at the next poll); BatchReadError after READ_TRIES in a row, unless this is
        the UNREAD_RUNS-th run that could not read them: then no results, and the batch `unreadable`."""
        try:
            results = await self.api.results(state, self.price)
        except BackendError as exc:
            what = shown(exc, 500)
            tries = self.read_failures[state.id] = self.read_failures.get(state.id, 0) + 1
            if tries < READ_TRIES:
                self.say(
                    f"batch {state.id}: its results could not be read (try {tries} of {READ_TRIES}: {what}); "
                    "trying again at the next check"
                )
                return None
            del self.read_failures[state.id]
            submission = replace(submission, unread_runs=submission.unread_runs + 1)
            self.submissions.save(submission)
            if submission.unread_runs < UNREAD_RUNS:
                raise BatchReadError(
                    f"batch {state.id}: its results could not be read ({tries} tries, last: {what}); the batch "
                    "stays recorded and the next run tries again"
                ) from exc
            why = f"its results could not be read in {submission.unread_runs} runs (last: {what})"
            return submission, state, Results(), why, "unreadable"
        self.read_failures.pop(state.id, None)
        why = f"the provider says: {state.errors}" if state.errors else ""
        return submission, state, results, why, state.status.value

    def _usable(self, submission: Submission, results: Results) -> dict[str, Response]:
        """The results of the requests the batch held, the first of each; every other line said."""
        for line in results.unreadable:
            self.say(line)
        held = set(submission.keys)
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
        submission: Submission,
        state: BatchState,
        results: Results,
        why: str,
        word: str,
        requests: dict[str, BatchRequest],
        sends: dict[str, int],
        outcome: Outcome,
    ) -> list[str]:
        """Store a finished batch's answers, then close its submission; the keys to send again."""
        got = list(self._usable(submission, results).items())
        answers = [(k, r) for k, r in got if r.error is None]
        try:
            self.store(answers)
        except Exception as exc:  # sqlite's or the file system's: the submission stays open for the next run
            raise BatchStoreError(
                f"batch {state.id}: its answers could not be stored in the response cache ({type(exc).__name__}: "
                f"{shown(exc, 300)}); the batch stays recorded and the next run collects it"
            ) from exc
        answered = {k for k, _ in answers}
        outcome.paid([r for _, r in answers])
        outcome.answered |= answered
        errors = {k: str(r.error) for k, r in got if r.error is not None and k not in answered}
        self.submissions.close(submission, word)
        unanswered = [k for k in submission.keys if k not in answered and k not in errors]
        if word != BatchStatus.COMPLETED.value:
            where = "sent again" if self.resend_failed else "asked live when their case runs"
            self.say(
                f"batch {state.id} {word}: {len(unanswered) + len(errors)} of its {len(submission.keys)} "
                f"requests unanswered, {where}" + (f"; {why}" if why else "")
            )
        left = f"batch {state.id} {word} before answering it" + (f" ({why})" if why else "")
        for key in unanswered:
            errors.setdefault(key, left)
        outcome.failed.update(errors)
        if not self.resend_failed:  # --batch-fallback=live: the cases ask them live, at once, not a later batch
            return []
        return [k for k in errors if k in requests and sends.get(k, 0) <= self.rounds]
