"""Many prompts per `/v1/completions` request, several requests in flight: an engine's own speed.

One chat request per prompt costs the client milliseconds of CPU and leaves the engine waiting on HTTP;
an OpenAI-compatible engine (vLLM) takes a list of prompts in one request and batches them itself. Each
request's answers are handed on (and so cached) the moment it returns. A request that fails is retried
with backoff (honouring Retry-After); one the server refuses as a whole (a 4xx, say one prompt too long
for the context) is split in halves until the refused prompt stands alone, so that only it becomes an
item error. Every outcome is reported to a Liveness, which ends the run when the server is gone.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...types import Decoding, Response
from ..base import ERROR_CHARS
from ..liveness import NOT_JSON, NOT_OPENAI, Liveness, bad_body, counts_as_error
from ..secrets import redact
from . import streamed

BATCH_SIZE = 256
"""Prompts per request unless --batch-size says otherwise."""
IN_FLIGHT = 4
"""Requests in flight unless --max-concurrency says otherwise."""
LOGPROBS = 20
"""Top log-probabilities asked for where the server cannot return the label tokens' own."""
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
SPLIT_STATUS = frozenset({400, 413, 422})
"""A request refused with these may be refusing one of its prompts (too long for the context, say)."""
NOT_COMPLETION = NOT_OPENAI.format(what="completion")
_BACKOFF_CAP = 8.0
_RETRY_AFTER_CAP = 60.0


@dataclass(frozen=True)
class Job:
    """One prompt to send: its place in the caller's batch, its text, and for a scored prompt the token
    ids that start each label (sent as `logprob_token_ids`; the answer is the most probable label)."""

    index: int
    text: str
    labels: dict[str, list[int]] | None = None
    format: str = ""
    """A scored prompt's answer format (how its answer is written)."""

    @property
    def group(self) -> tuple[int, ...] | None:
        """Prompts sharing a request share its parameters: generated ones, or the same label tokens."""
        return None if self.labels is None else tuple(sorted(t for ids in self.labels.values() for t in ids))


Done = Callable[[Job, Response], None]
Read = Callable[[Job, dict[str, Any]], Response]
"""Makes the Response for a job from its choice in the reply."""


class Unreached(Exception):
    """A request that never reached its server, its retries spent, from a client that hands such
    requests back (``hand_back``: one server of several, whose prompts the others can answer)."""


class RequestFailed(Exception):
    """A request that got a reply the client cannot use: its status, whether to retry, how long to wait."""

    def __init__(self, message: str, status: int, retry: bool, wait: float | None = None):
        super().__init__(message)
        self.status, self.retry, self.wait = status, retry, wait


class BatchedCompletions:
    """Sends jobs to ``{api_base}/completions`` in batches; one client (and its connections) per loop."""

    def __init__(
        self,
        api_base: str,
        model: str,
        liveness: Liveness,
        *,
        batch_size: int | None = None,
        in_flight: int | None = None,
        num_retries: int = 4,
        request_timeout: float = 120.0,
        api_key: str | None = None,
    ):
        import httpx

        self._httpx = httpx
        self.url = api_base.rstrip("/") + "/completions"
        self.model = model
        self.liveness = liveness
        self.batch_size = max(1, batch_size or BATCH_SIZE)
        self.in_flight = max(1, in_flight or IN_FLIGHT)
        self.num_retries = max(0, num_retries)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(request_timeout, connect=min(10.0, request_timeout)),
            limits=httpx.Limits(
                max_connections=self.in_flight + 2, max_keepalive_connections=self.in_flight + 2
            ),
            headers=headers,
        )
        self.requests = 0
        """Requests sent (every attempt), for the benchmarks and the tests."""
        self.transport_errors: type[Exception] = httpx.TransportError
        self.hand_back = False
        """Raise Unreached, instead of making item errors, for a request that never reached the server."""

    def fixed_fields(self, decoding: Decoding) -> dict[str, Any]:
        """What every generation request carries besides its prompts (all of it decides the answers)."""
        body: dict[str, Any] = {
            "max_tokens": decoding.max_new_tokens,
            "temperature": decoding.temperature,
            "add_special_tokens": False,
            "return_token_ids": True,
        }
        if decoding.seed is not None:
            body["seed"] = decoding.seed
        return body

    @staticmethod
    def score_fields() -> dict[str, Any]:
        """What every scoring request carries: one greedy token and the label tokens' log-probabilities."""
        return {
            "max_tokens": 1,
            "temperature": 0.0,
            "add_special_tokens": False,
            "return_token_ids": True,
            "logprobs": LOGPROBS,
            "return_tokens_as_token_ids": True,
        }

    def chunks(self, jobs: Sequence[Job], whole: int | None = None) -> list[list[Job]]:
        return self.chunks_of(jobs, self.batch_size, self.in_flight, whole)

    @staticmethod
    def chunks_of(
        jobs: Sequence[Job], batch_size: int, in_flight: int, whole: int | None = None
    ) -> list[list[Job]]:
        """Jobs grouped by request parameters, each group cut into requests of at most batch_size, and
        into at least ``in_flight`` requests when it has that many prompts (the engine gets them all).
        ``whole``: the prompts of the whole call these jobs are a piece of, which sizes the requests."""
        groups: dict[tuple[int, ...] | None, list[Job]] = {}
        for job in jobs:
            groups.setdefault(job.group, []).append(job)
        out = []
        for group in groups.values():
            size = max(1, min(batch_size, math.ceil((whole or len(group)) / in_flight)))
            out += [group[i : i + size] for i in range(0, len(group), size)]
        return out

    async def run(
        self,
        jobs: Sequence[Job],
        decoding: Decoding,
        done: Done,
        read: Read,
        *,
        whole: int | None = None,
        limit: asyncio.Semaphore | None = None,
    ) -> None:
        """Every job answered through ``done`` (an answer or an item error), or ServerGoneError. The
        pieces of one call (``whole`` prompts) share its ``limit`` on requests in flight."""
        limit = limit or asyncio.Semaphore(self.in_flight)

        async def one(chunk: list[Job]) -> None:
            async with limit:
                await self.send(chunk, decoding, done, read)

        await self.liveness.supervise(asyncio.gather(*(one(c) for c in self.chunks(jobs, whole))))

    async def send(self, chunk: list[Job], decoding: Decoding, done: Done, read: Read) -> None:
        scored = chunk[0].labels is not None
        body: dict[str, Any] = {"model": self.model, "prompt": [j.text for j in chunk]}
        body |= self.score_fields() if scored else self.fixed_fields(decoding)
        if scored:
            body["logprob_token_ids"] = list(chunk[0].group or ())
        elif decoding.max_new_tokens > streamed.STREAM_ABOVE_TOKENS:
            body["stream"] = True  # each chunk of tokens is an answer: a long generation is not cut
        last: RequestFailed | None = None
        for attempt in range(self.num_retries + 1):
            if attempt:
                await asyncio.sleep(_backoff(attempt, last.wait if last else None))
            try:
                choices = await self._post(body, len(chunk))
            except RequestFailed as exc:
                last = exc
                if exc.retry:
                    continue
                if exc.status in SPLIT_STATUS and len(chunk) > 1:
                    await self._split(chunk, exc, decoding, done, read)
                    return
                break
            for job, choice in zip(chunk, choices, strict=True):
                done(job, read(job, choice))
            return
        if self.hand_back and last is not None and last.status == 0:
            raise Unreached(str(last))
        for job in chunk:
            done(job, Response(text="", error=str(last)[:ERROR_CHARS]))

    async def _split(
        self, chunk: list[Job], refused: RequestFailed, decoding: Decoding, done: Done, read: Read
    ) -> None:
        """A request refused as a whole: its first prompt alone tells whether the refusal is about a prompt
        (then the rest is sent in halves until each refused prompt stands alone) or about the request
        (then every prompt gets the refusal, without a request each)."""
        first: list[Response] = []

        def alone(job: Job, response: Response) -> None:
            first.append(response)
            done(job, response)

        await self.send(chunk[:1], decoding, alone, read)
        if first and first[0].error == str(refused)[:ERROR_CHARS]:
            for job in chunk[1:]:
                done(job, first[0])
            return
        rest = chunk[1:]
        half = max(1, len(rest) // 2)
        for part in (rest[:half], rest[half:]):
            if part:
                await self.send(part, decoding, done, read)

    async def _post(self, body: dict[str, Any], n: int) -> list[dict[str, Any]]:
        """The request's choices in prompt order, or RequestFailed (the liveness told either way)."""
        httpx = self._httpx
        self.requests += 1
        try:
            async with self.client.stream("POST", self.url, json=body) as reply:
                if reply.status_code != 200:
                    await reply.aread()
                    self._refused(reply)
                if body.get("stream"):
                    choices = await streamed.read(reply.aiter_lines(), self.liveness.answered)
                else:
                    await reply.aread()
                    choices = self._choices(reply.text)
        except httpx.TransportError as exc:
            what = redact(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            self.liveness.failed(f"POST {self.url}: {what}")
            raise RequestFailed(what, 0, retry=True) from exc
        except streamed.StreamError as exc:
            raise RequestFailed(str(exc), 200, retry=True) from exc
        if len(choices) != n:
            raise RequestFailed(
                f"the server returned {len(choices)} choices for {n} prompts", 200, retry=True
            )
        self.liveness.answered()
        return choices

    def _choices(self, body: str) -> list[dict[str, Any]]:
        """The choices of a 200's body in prompt order; a body that is no completion is an error reply
        (counted, and said as what it is) and RequestFailed."""
        try:
            data = json.loads(body)
        except ValueError as exc:
            self.liveness.errored(200, NOT_JSON)
            raise RequestFailed(bad_body(NOT_JSON, body), 200, retry=True) from exc
        try:
            return sorted(data["choices"], key=lambda c: int(c["index"]))
        except (KeyError, TypeError, ValueError) as exc:
            self.liveness.errored(200, NOT_COMPLETION)
            raise RequestFailed(bad_body(NOT_COMPLETION, body), 200, retry=True) from exc

    def _refused(self, reply: Any) -> None:
        """RequestFailed for a reply other than 200, counted by the liveness."""
        if counts_as_error(reply.status_code):
            self.liveness.errored(reply.status_code)  # each attempt: these retries are ours
        else:
            self.liveness.answered()  # a refusal of the request is an answer
        detail = redact(reply.text[:ERROR_CHARS])
        wait = _retry_after(reply.headers.get("retry-after"))
        retry = reply.status_code in RETRY_STATUS
        raise RequestFailed(f"HTTP {reply.status_code}: {detail}", reply.status_code, retry, wait)

    async def aclose(self) -> None:
        await self.client.aclose()


def first_logprobs(choice: dict[str, Any]) -> dict[int, float]:
    """Token id -> log-probability at the first generated position (tokens written `token_id:N`)."""
    logprobs = choice.get("logprobs") or {}
    top = (logprobs.get("top_logprobs") or [None])[0] or {}
    out = {}
    for token, value in top.items():
        _, _, number = str(token).rpartition("token_id:")
        if number.isdigit() and isinstance(value, (int, float)) and math.isfinite(value):
            out[int(number)] = float(value)
    return out


def _retry_after(value: str | None) -> float | None:
    try:
        return min(_RETRY_AFTER_CAP, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def _backoff(attempt: int, retry_after: float | None) -> float:
    """Retry-After when the server gave one, else exponential backoff with jitter."""
    if retry_after is not None:
        return retry_after
    return min(_BACKOFF_CAP, 0.5 * 2 ** (attempt - 1)) * (1 + random.random() / 4)
