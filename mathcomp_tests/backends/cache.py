"""A sqlite response cache shared by xdist workers: every model call goes through it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from filelock import FileLock

from ..types import Decoding, Prompt, Response
from .base import Backend, OnResponse

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    revision TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    meta TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(backend: Backend, prompt: Prompt, decoding: Decoding) -> str:
    """Everything that changes the output, nothing that does not (timeouts, concurrency, batch size)."""
    parts = {
        "model": backend.model_id,
        "revision": backend.revision,
        "settings": backend.cache_settings(),
        "messages": [[m.role, m.content] for m in prompt.messages],
        "decoding": decoding.as_key(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class ResponseCache:
    """Responses by key in one sqlite file (WAL, busy timeout) that several processes may share."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = 60000")
        # Switching to WAL needs an exclusive lock and does not wait on busy_timeout: xdist workers opening
        # a new cache together take turns.
        with FileLock(f"{self.path}.lock"):
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(_SCHEMA)

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]:
        found: dict[str, Response] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, text, input_tokens, output_tokens, meta FROM responses WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, text, tin, tout, meta in rows:
                    found[key] = Response(text, None, True, tin, tout, json.loads(meta))
        return found

    def put(self, key: str, backend: Backend, response: Response) -> None:
        """Store one answered response at once (errors are never stored: a rerun asks again)."""
        if response.error is not None:
            return
        row = (
            key,
            backend.model_id,
            backend.revision,
            response.text,
            response.input_tokens,
            response.output_tokens,
            json.dumps(response.meta, default=str),
            time.time(),
        )
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?)", row)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedBackend:
    """Wraps a backend: cached prompts are answered from sqlite, the rest sent in one batch."""

    def __init__(self, inner: Backend, cache: ResponseCache | None):
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.revision = inner.revision
        self.calls = 0
        """Prompts this process sent to the model (cache misses)."""

    def cache_settings(self) -> dict[str, object]:
        return self.inner.cache_settings()

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        if self.cache is None:
            self.calls += len(prompts)
            return self.inner.complete(prompts, decoding, on_response)
        keys = [cache_key(self.inner, p, decoding) for p in prompts]
        hits = self.cache.get_many(keys)
        results: list[Response | None] = [hits.get(k) for k in keys]
        missing = [i for i, r in enumerate(results) if r is None]
        for i, r in enumerate(results):
            if r is not None and on_response:
                on_response(i, r)
        if missing:
            self.calls += len(missing)
            cache = self.cache
            stored: set[int] = set()

            def store(j: int, response: Response) -> None:
                index = missing[j]
                cache.put(keys[index], self.inner, response)
                stored.add(index)
                if on_response:
                    on_response(index, response)

            fresh = self.inner.complete([prompts[i] for i in missing], decoding, store)
            for j, (index, response) in enumerate(zip(missing, fresh, strict=True)):
                results[index] = response
                if index not in stored:
                    store(j, response)
        return [r for r in results if r is not None]

    def close(self) -> None:
        self.inner.close()
        if self.cache is not None:
            self.cache.close()
