"""The one protocol every backend speaks: a batch of prompts in, one response per prompt out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..types import Decoding, Prompt, Response

ERROR_CHARS = 2000
"""How much of a provider's error text an answer's error or a BackendError keeps (redacted first: a secret
may stand anywhere in it)."""
OnResponse = Callable[[int, Response], None]
"""Called with (index in the batch, response) as soon as each response exists."""


class Backend(Protocol):
    model_id: str
    """The model's name as reports show it (identity for the cache comes from ``cache_identity``)."""
    revision: str
    """Weights version (a commit hash, a content fingerprint, --model-revision) or "" when none is known."""

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        """One response per prompt, in the order given; failures come back as Response(error=...)."""
        ...

    def cache_identity(self) -> dict[str, object]:
        """Everything about the model and its settings that decides an answer: weights (by content or
        commit, never by how a path was spelled), an API deployment's parameters (never its secrets), what
        the server says it serves, --model-revision. Part of every cache key."""
        ...

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        """What the backend reads besides the messages to answer ``prompt`` (part of its cache key)."""
        ...

    def close(self) -> None: ...


class BackendError(RuntimeError):
    """A backend that cannot start: missing package, unknown model, unreachable weights."""


class ServerLeftWarning(UserWarning):
    """A server of several went away during the run; the others take over its prompts. The suite keeps
    each as an end-of-run note and in summary.json's ``servers_left``."""


class ServerGoneError(BackendError):
    """The model server stopped answering in the middle of a run: the run ends here, not after minutes
    of retries per case. Everything answered before stays in the response cache."""


class NoAnswer(LookupError):
    """A prompt a replayed model has no recorded answer for (merge/replay.py: no shard asked it); the
    message names the case and the scenario. The case errors in one line: nothing is guessed."""
