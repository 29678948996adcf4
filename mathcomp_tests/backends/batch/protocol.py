"""A provider's batch API as the runner sees it, in no provider's words.

A request is neutral (its cache key, prompt and decoding); each provider module (one class, a
``BatchProvider``, named in ``PROVIDERS``) encodes its own from the live call's parameters (encoding.py),
says each batch's state as a ``BatchStatus``, keeps its own details of a batch in ``Created.extras``, and
reads a finished batch's results into the Responses the live path would have made (encoding.py ``answer``).
A provider raises only ``BackendError`` (litellm's, openai's and httpx's errors are translated at its
boundary, ``failure``); the runner's own stops are ``BatchError``s, each said in one line and each leaving
the batches recorded for the next run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from ...printable import printable
from ...types import Decoding, Prompt, Response
from ..base import ERROR_CHARS, BackendError
from ..secrets import redact

if TYPE_CHECKING:
    from .pricing import Pricing


TIMEOUT = 120.0
"""Seconds one request to a provider's batch endpoints may take."""

class BatchStatus(Enum):
    """Where a batch is, whichever provider runs it (each translates its own words)."""

    RUNNING = "running"
    CANCELLING = "cancelling"
    COMPLETED = "completed"
    EXPIRED = "expired"
    """Ended at the provider's deadline: some requests unanswered."""
    CANCELLED = "cancelled"
    FAILED = "failed"
    """Refused as a whole (its input did not validate): no request answered."""

    @property
    def done(self) -> bool:
        """The batch changes no more: its results can be read."""
        return self not in (BatchStatus.RUNNING, BatchStatus.CANCELLING)


@dataclass(frozen=True)
class BatchRequest:
    """One request of a batch: its cache key (the provider's custom id) and what it asks."""

    key: str
    prompt: Prompt
    decoding: Decoding


@dataclass(frozen=True)
class BatchState:
    """What the provider says of one batch."""

    id: str
    status: BatchStatus
    total: int = 0
    completed: int = 0
    failed: int = 0
    said: str = ""
    """The provider's own word while it runs, where it says more than the status (`validating`)."""
    errors: str = ""
    """Why the provider failed the batch as a whole, in its words (redacted, printable); "" where it said nothing."""
    results: tuple[tuple[str, str], ...] = ()
    """Where the provider keeps the results, in its terms: (what, id) pairs its own ``results`` reads."""

    @property
    def done(self) -> bool:
        return self.status.done

    def line(self) -> str:
        """The progress line: status and counts."""
        word = self.status.value + (f" ({self.said})" if self.said and not self.done else "")
        return f"batch {self.id}: {word}, {self.completed} of {self.total} answered, {self.failed} failed"


@dataclass(frozen=True)
class Created:
    """A batch the provider made: its state, and what the provider module keeps of it in its own words."""

    state: BatchState
    extras: dict[str, str] = field(default_factory=dict)
    """The provider's own details of the batch, recorded with it for whoever looks at it by hand (OpenAI: the
    ``input_file_id`` it was made from); the runner never reads them. Empty where there are none."""


@dataclass(frozen=True)
class Result:
    """One result line of a batch: its custom id (the cache key), the Response, and where it was read."""

    key: str
    response: Response
    where: str
    """`batch b: output file line 3`: the batch, file and line, for the lines that speak of it."""


@dataclass
class Results:
    """What a finished batch's output holds: its results in order, and a sentence per line that is none."""

    found: list[Result] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


class BatchAPI(Protocol):
    """One provider's batch endpoints for one model and server. Every method raises only BackendError."""

    max_requests: int
    """Requests one batch may hold."""
    max_bytes: int
    """Bytes one batch's requests may take."""

    def size(self, request: BatchRequest) -> int:
        """Bytes ``request`` takes in a batch; Unsendable where the live call would refuse it too."""
        ...

    async def create(self, requests: Sequence[BatchRequest]) -> Created:
        """One batch of ``requests`` (never retried: a create that timed out may have made a batch)."""
        ...

    async def retrieve(self, batch_id: str) -> BatchState: ...

    async def results(self, state: BatchState, price: Pricing) -> Results:
        """A finished batch's results: an answer priced at the batch rate, or a failed request (``error``
        set); a request it does not list was not answered."""
        ...

    async def close(self) -> None:
        """Close what the calls opened (before the backend's event loop closes)."""
        ...


class BatchProvider(Protocol):
    """What ``PROVIDERS`` (backends/batch/__init__.py) names: a provider module's class, called with litellm,
    the model name less its provider prefix, the server (None: the provider's own) and the key (None: the
    provider's environment variable), making that model's BatchAPI."""

    def __call__(self, litellm: Any, model: str, api_base: str | None, api_key: str | None) -> BatchAPI: ...


class Unsendable(BackendError):
    """A request the provider's encoding refuses, as the live call would (litellm's UnsupportedParamsError):
    an item error, never a batch request."""


class BatchError(BackendError):
    """A batch fault that stops the run INCOMPLETE in one line; the batches stay recorded and the next run
    collects them. Not a ServerGoneError: the provider may be answering well."""


class BatchWaitError(BatchError):
    """--batch-wait ran out with batches still running."""


class BatchReadError(BatchError):
    """A finished batch's results could not be read (READ_TRIES in a row)."""


class SubmissionError(BatchError):
    """A submission (a batch's saved state, submissions.py) could not be read or written: no batch is sent
    while one may be forgotten."""


class BatchStoreError(BatchError):
    """A batch's answers could not be stored in the response cache."""


def shown(text: object, limit: int = 300) -> str:
    """Provider text fit for a progress line: secrets redacted, control characters escaped, bounded."""
    return printable(redact(str(text)))[:limit]


def failure(what: str, exc: BaseException) -> BackendError:
    """An error raised at the provider boundary (litellm's, openai's, httpx's own types) as the backend's
    error: what was asked, the HTTP status where the error carries one, the error itself, redacted."""
    if isinstance(exc, BackendError):
        return BackendError(shown(f"{what}: {exc}", 500))
    status = getattr(exc, "status_code", None)
    http = f"HTTP {status}: " if isinstance(status, int) else ""
    return BackendError(shown(f"{what}: {http}{type(exc).__name__}: {exc}", 500))


def unreadable(where: str, problem: str) -> str:
    """The sentence said for a line that is not a result."""
    return f"{where}: {problem}; the request it answers counts as unanswered"


def failed_request(batch_id: str, detail: str) -> Response:
    """The Response of a request the batch answered with an error (an item error, never an answer)."""
    return Response(text="", error=redact(f"batch {batch_id}: {detail}")[:ERROR_CHARS])


class Unreadable(ValueError):
    """A result line that is not the shape the provider documents."""
