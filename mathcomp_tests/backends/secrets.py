"""Every secret the run holds, and the one redaction that keeps them out of what a run writes or prints.

A secret is the value of a secret-looking environment variable (a name ending in KEY, TOKEN, SECRET or
PASSWORD) or a value the run was handed as one (a --model-config deployment's `api_key`, literal or
`os.environ/NAME`, whatever NAME is). A server or proxy that echoes the Authorization header puts the key
into its answer: ``scrub`` takes it out of the answer before anything reads or stores it, and marks it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..types import Response

MIN_CHARS = 8
"""Shorter values are never taken for secrets: replacing "none" or "1" everywhere would garble text."""
REDACTED = "redacted"
"""The meta key (so the cache row and the results.jsonl record) of an answer a secret was taken out of."""
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$")
_held: dict[str, str] = {}
_lock = threading.Lock()

Secrets = Sequence[tuple[str, str]]
"""(value, what it is replaced by), the longest value first (a key that holds another is replaced whole)."""


def hold(value: object, name: str) -> None:
    """Treat ``value`` as a secret for the rest of the process; it is shown as ``<name>`` wherever it would
    have appeared."""
    if isinstance(value, str) and len(value) >= MIN_CHARS:
        with _lock:
            _held.setdefault(value, f"<{name}>")


def environment() -> dict[str, str]:
    """A copy of the process's environment, read from any thread. Another thread may remove a variable while
    it is read (pytest sets and removes PYTEST_CURRENT_TEST around every test phase, while a backend's loop
    thread stores answers): the copy is then read again, never raising KeyError mid-run."""
    while True:
        try:
            return dict(os.environ.items())
        except KeyError:  # removed between listing the names and reading its value
            continue


def held() -> Secrets:
    """Every secret the run holds now: the environment's secret-looking variables and those held."""
    found = {v: f"<{n}>" for n, v in environment().items() if len(v) >= MIN_CHARS and _SECRET_NAME.search(n)}
    with _lock:
        found.update((v, shown) for v, shown in _held.items() if v not in found)
    return sorted(found.items(), key=lambda pair: -len(pair[0]))


def redact(text: str, secrets: Secrets | None = None) -> str:
    """``text`` with every secret the run holds replaced by its name."""
    for value, shown in held() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, shown)
    return text


def scrub(response: Response, secrets: Secrets | None = None) -> Response:
    """``response`` with no secret in its text, error or meta; one that had any is marked ``redacted``."""
    secrets = held() if secrets is None else secrets
    if not secrets:
        return response
    text = redact(response.text, secrets)
    error = redact(response.error, secrets) if response.error is not None else None
    meta = _scrubbed(response.meta, secrets)
    if text == response.text and error == response.error and meta == response.meta:
        return response
    return replace(response, text=text, error=error, meta={**meta, REDACTED: True})


def _scrubbed(value: object, secrets: Secrets) -> dict[str, object]:
    out = _walk(value, secrets)
    return out if isinstance(out, dict) else {}


def _walk(value: object, secrets: Secrets) -> object:
    """Strings anywhere in a JSON-like value redacted (keys too), everything else as it was."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {redact(k, secrets) if isinstance(k, str) else k: _walk(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(_walk(v, secrets) for v in value)
    return value
