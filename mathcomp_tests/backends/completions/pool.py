"""Several OpenAI-compatible servers of one model, each fed batched `/v1/completions` requests.

The prompts of a ``run`` are cut into requests (batched.py) and put on one queue; each server takes the
next request whenever it has a free place (its own bound on requests in flight), so a faster server
does more. Every request to a server is watched by that server's own Liveness. A server that counts as
gone (its Liveness), or that a request could not reach after its retries, hands its unanswered prompts
back to the queue for the others and takes no more for the rest of the run; a warning says so, once.
Only when no server is left does the run stop, with one ServerGoneError that names each server and why.
Which server answered a prompt decides nothing: they serve the same model with the same decoding.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...types import Decoding
from ..base import ServerGoneError, ServerLeftWarning
from ..liveness import Liveness
from .batched import BatchedCompletions, Done, Job, Read, Unreached


@dataclass
class Member:
    """A server of the pool: its client, its Liveness, its places in flight, and why it left (if it did)."""

    root: str
    client: BatchedCompletions
    places: asyncio.Semaphore
    gone: str | None = None
    prompts: int = 0
    """Prompts it answered (for the benchmarks and the tests)."""

    @property
    def liveness(self) -> Liveness:
        return self.client.liveness


@dataclass
class _Work:
    """One ``run``'s queue of requests and the prompts still unanswered."""

    queue: deque[list[Job]]
    left: int
    answered: set[int] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def put_back(self, chunk: list[Job]) -> None:
        rest = [job for job in chunk if job.index not in self.answered]
        if rest:
            self.queue.append(rest)
        self.changed.set()


class ServerPool:
    """Runs jobs over every server still answering; made inside the loop that runs it."""

    def __init__(self, members: Sequence[Member]):
        self.members = list(members)
        for member in self.members:
            member.client.hand_back = True  # an unreachable server's prompts go to the others

    def chunks(self, jobs: Sequence[Job], whole: int | None = None) -> list[list[Job]]:
        """The jobs cut into requests, at least one per place in flight over all servers still here
        (``whole``: the prompts of the call these jobs are a piece of)."""
        live = [m for m in self.members if m.gone is None] or self.members
        first = live[0].client
        places = sum(m.client.in_flight for m in live)
        return BatchedCompletions.chunks_of(jobs, first.batch_size, places, whole)

    async def run(
        self, jobs: Sequence[Job], decoding: Decoding, done: Done, read: Read, *, whole: int | None = None
    ) -> None:
        """Every job answered through ``done``, or ServerGoneError once no server is left."""
        work = _Work(deque(self.chunks(jobs, whole)), len(jobs))

        def answer(job: Job, response: Any) -> None:
            if job.index in work.answered:
                return
            work.answered.add(job.index)
            work.left -= 1
            if work.left == 0:
                work.changed.set()
            done(job, response)

        async def feed(member: Member) -> None:
            workers = (
                self._worker(member, work, decoding, answer, read) for _ in range(member.client.in_flight)
            )
            await asyncio.gather(*workers)

        await asyncio.gather(*(feed(m) for m in self.members if m.gone is None))
        if work.left:
            raise self.error()

    async def _worker(
        self, member: Member, work: _Work, decoding: Decoding, answer: Done, read: Read
    ) -> None:
        while member.gone is None:
            if not work.queue:
                if work.left == 0 or all(m.gone is not None for m in self.members):
                    return
                work.changed.clear()
                await work.changed.wait()
                continue
            async with member.places:  # shared by every run under way (a case asked ahead of its turn)
                if member.gone is not None or not work.queue:
                    continue
                chunk = work.queue.popleft()

                def mine(job: Job, response: Any) -> None:
                    member.prompts += job.index not in work.answered
                    answer(job, response)

                try:
                    await member.liveness.supervise(member.client.send(chunk, decoding, mine, read))
                except ServerGoneError as exc:
                    work.put_back(chunk)
                    self._leave(member, str(exc), work)
                except Unreached as exc:
                    work.put_back(chunk)
                    self._leave(member, f"unreachable after its retries: {exc}", work)
                except BaseException:
                    work.put_back(chunk)
                    raise

    def _leave(self, member: Member, why: str, work: _Work) -> None:
        """``member`` takes no more prompts; said once, and the others are woken for what it handed back."""
        work.changed.set()
        if member.gone is not None:
            return
        member.gone = why
        left = [m.root for m in self.members if m.gone is None]
        if left:
            warnings.warn(
                f"the model server at {member.root} went away ({_reason(why)}); its unanswered prompts go "
                f"to the {len(left)} other server(s) left: {', '.join(left)}",
                ServerLeftWarning,
                stacklevel=1,
            )

    def error(self) -> ServerGoneError:
        """Every server gone: one error naming each and why, as one server's would."""
        whys = "; ".join(f"{m.root}: {_reason(m.gone or 'not asked')}" for m in self.members)
        cached = self.members[0].liveness.cached
        kept = (
            "every answer received so far is in the response cache, and a rerun asks only for the rest"
            if cached
            else "nothing is cached under --no-cache, so a rerun asks for every answer again"
        )
        return ServerGoneError(
            f"every model server stopped answering ({whys}). The run stops here; {kept} "
            "(--max-connection-failures, --max-error-streak and --server-timeout set when a server counts "
            "as gone)"
        )

    async def aclose(self) -> None:
        for member in self.members:
            await member.client.aclose()


def _reason(message: str) -> str:
    """The cause inside a ServerGoneError's message (the part in its first parentheses), else all of it."""
    head, _, tail = message.partition("stopped answering (")
    if not tail:
        return message
    depth, out = 1, []
    for ch in tail:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            break
        out.append(ch)
    return "".join(out)
