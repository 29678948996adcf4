"""The one protocol every backend speaks: a batch of prompts in, one response per prompt out."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Protocol

from ..types import Decoding, Prompt, Response

OnResponse = Callable[[int, Response], None]
"""Called with (index in the batch, response) as soon as each response exists."""


class Backend(Protocol):
    model_id: str
    """Stable identity of the model, part of every cache key."""
    revision: str
    """Weights version (a commit hash, a content fingerprint) or "" when the provider gives none."""

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        """One response per prompt, in the order given; failures come back as Response(error=...)."""
        ...

    def cache_settings(self) -> dict[str, object]:
        """Backend settings that change outputs (and so belong in the cache key)."""
        ...

    def close(self) -> None: ...


class BackendError(RuntimeError):
    """A backend that cannot start: missing package, unknown model, unreachable weights."""


_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$")


def redact(text: str) -> str:
    """Remove the value of every secret-looking environment variable from ``text``."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, f"<{name}>")
    return text
