"""A sqlite response cache shared by xdist workers: every model call goes through it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from filelock import FileLock

from ...types import Decoding, Prompt, Response
from ..base import Backend, OnResponse
from ..secrets import held, scrub
from .file import APPLICATION_ID, DamagedCacheError, foreign_tables, is_damage

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
KEY_VERSION = 2
"""Bumped whenever what goes into a key changes, so that no older entry can answer for a newer key."""
FLUSH_SECONDS = 0.25
"""A batch backend's answers wait at most this long in memory before they are committed together."""
FLUSH_SIZE = 2000
_COLUMNS = ("key", "model", "revision", "text", "input_tokens", "output_tokens", "meta", "created")
"""The columns _SCHEMA makes; a table of that name without them was made by something else."""
_BAD_META = (
    "SELECT count(*) FROM responses WHERE CASE WHEN json_valid(meta) THEN json_type(meta) != 'object' ELSE 1 END"
)
"""Rows whose meta no reader can take (sqlite's JSON functions: one pass, no row loaded into Python)."""
_CHECKED: set[str] = set()
"""Cache files this process has checked whole (PRAGMA quick_check): each is checked once per process."""


def cache_keys(backend: Backend, prompts: Sequence[Prompt], decoding: Decoding) -> list[str]:
    """Everything that decides each output, nothing that does not (timeouts, concurrency, batch size)."""
    model = json.dumps({"v": KEY_VERSION, "model": backend.cache_identity()}, sort_keys=True, default=str)
    shared = json.dumps(decoding.as_key(), sort_keys=True)
    keys = []
    for prompt in prompts:
        own = {
            "inputs": backend.prompt_inputs(prompt),
            "messages": [[m.role, m.content] for m in prompt.messages],
        }
        text = f"{model}\n{shared}\n{json.dumps(own, sort_keys=True, default=str)}"
        keys.append(hashlib.sha256(text.encode()).hexdigest())
    return keys


@dataclass(frozen=True)
class Row:
    """One stored response with the model it came from (for `mathcomp cache`)."""

    key: str
    model: str
    revision: str
    response: Response
    created: float

    def values(self) -> tuple[object, ...]:
        r = self.response
        meta = json.dumps(r.meta, default=str) if r.meta else "{}"
        return (
            self.key,
            self.model,
            self.revision,
            r.text,
            r.input_tokens,
            r.output_tokens,
            meta,
            self.created,
        )


class ResponseCache:
    """Responses by key in one sqlite file (WAL, busy timeout) that several processes may share.

    WAL with ``synchronous=NORMAL``: a committed answer survives the process being killed; only a power
    cut can take back the last commits.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if is_damage(exc):
                raise DamagedCacheError(self.path, str(exc)) from exc
            raise

    def _open(self) -> None:
        """WAL mode and the table; a file opened for the first time in this process is checked whole, so
        that a damaged one stops the run before any case instead of failing it half way."""
        self._db.execute("PRAGMA busy_timeout = 60000")
        # Switching to WAL needs an exclusive lock and does not wait on busy_timeout: xdist workers opening
        # a new cache together take turns.
        with FileLock(f"{self.path}.lock"):
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute(_SCHEMA)
            # Asked on this connection, never by reading the file: see cache_file.not_ours.
            if not self._db.execute("PRAGMA application_id").fetchone()[0] and foreign_tables(self._db) is None:
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # how cache commands know it
        self._db.execute("PRAGMA synchronous = NORMAL")
        key = str(self.path.resolve())
        if key not in _CHECKED:
            found = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
            if found != "ok":
                raise DamagedCacheError(self.path, str(found))
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            missing = [c for c in _COLUMNS if c not in columns]
            if missing:
                raise DamagedCacheError(self.path, f"its responses table has no column {', '.join(missing)}")
            bad = self._db.execute(_BAD_META).fetchone()[0]
            if bad:
                raise DamagedCacheError(self.path, f"{bad} answer(s) with meta that is not a JSON object")
            _CHECKED.add(key)

    def _meta(self, key: str, meta: str) -> dict[str, object]:
        """A row's meta as stored: a JSON object, else the cache is damaged (written by something else)."""
        try:
            value = json.loads(meta) if meta != "{}" else {}
        except (TypeError, ValueError):
            value = None
        if not isinstance(value, dict):
            raise DamagedCacheError(self.path, f"the answer under key {key[:12]}... has meta that is not JSON")
        return value

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
                    found[key] = Response(text, None, True, tin, tout, self._meta(key, meta))
        return found

    def put(self, key: str, backend: Backend, response: Response) -> None:
        """Store one answered response at once (errors are never stored: a rerun asks again)."""
        self.put_many([Row(key, backend.model_id, backend.revision, response, time.time())])

    def put_many(self, rows: Sequence[Row]) -> None:
        """Store answered responses in one transaction (failed requests are skipped), every secret the
        run holds taken out first: whatever path an answer came by, no key reaches the file."""
        secrets = held()
        values = [
            replace(r, response=scrub(r.response, secrets)).values() for r in rows if r.response.error is None
        ]
        if not values:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?)", values)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class AnswerStore(Protocol):
    """What CachedBackend reads and writes answers through (a ResponseCache)."""

    def get_many(self, keys: Sequence[str]) -> dict[str, Response]: ...

    def put_many(self, rows: Sequence[Row]) -> None: ...


@runtime_checkable
class CollectsAnswers(Protocol):
    """A backend that gets answers outside its calls (the batch backend: batches of earlier runs, a whole
    selection before its cases): the CachedBackend wrapping it hands it its store, so that every answer,
    whatever path it came by, is written through the one cache."""

    def keep_answers_in(self, store: AnswerStore) -> None: ...


class _Writer:
    """Buffers a batch backend's answers and commits them together; a streaming backend's at once."""

    def __init__(self, cache: ResponseCache, backend: Backend, streaming: bool):
        self.cache, self.backend, self.streaming = cache, backend, streaming
        self.pending: list[Row] = []
        self.since = 0.0

    def add(self, key: str, response: Response) -> None:
        now = time.time()
        if not self.pending:
            self.since = now
        self.pending.append(Row(key, self.backend.model_id, self.backend.revision, response, now))
        if self.streaming or len(self.pending) >= FLUSH_SIZE or now - self.since >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        rows, self.pending = self.pending, []
        self.cache.put_many(rows)


class CachedBackend:
    """Wraps a backend: cached prompts are answered from sqlite, the rest sent in one batch.

    Answers from a backend that streams them (``streams = True``: an API, where each answer costs a
    request) are committed the moment each arrives; a local model's are committed in groups, at least
    every quarter second, so a crash loses at most that much recomputable work.
    """

    def __init__(self, inner: Backend, cache: ResponseCache | None):
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.revision = inner.revision
        self.calls = 0
        """Prompts this process sent to the model (cache misses)."""
        if cache is not None and isinstance(inner, CollectsAnswers):
            inner.keep_answers_in(cache)

    @property
    def applied_chat_template(self) -> str | None:
        """The inner backend's (hf); None for a backend whose prompt layout is not ours to choose."""
        value = getattr(self.inner, "applied_chat_template", None)
        return str(value) if value is not None else None

    def cache_identity(self) -> dict[str, object]:
        return self.inner.cache_identity()

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return self.inner.prompt_inputs(prompt)

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        """Every answer with the run's secrets taken out (see secrets.py) before anything reads, caches or
        hands it on: a server that echoes the Authorization header puts the key into its answers."""
        secrets = held()
        if self.cache is None:
            self.calls += len(prompts)

            def told(index: int, response: Response) -> None:
                if on_response:
                    on_response(index, scrub(response, secrets))

            return [scrub(r, secrets) for r in self.inner.complete(prompts, decoding, told)]
        keys = cache_keys(self.inner, prompts, decoding)
        hits = self.cache.get_many(keys)  # a row an older version stored with a key in it: taken out too
        results: list[Response | None] = [scrub(hits[k], secrets) if k in hits else None for k in keys]
        missing = [i for i, r in enumerate(results) if r is None]
        for i, r in enumerate(results):
            if r is not None and on_response:
                on_response(i, r)
        if missing:
            self.calls += len(missing)
            writer = _Writer(self.cache, self.inner, bool(getattr(self.inner, "streams", False)))
            stored: set[int] = set()

            def store(j: int, response: Response) -> None:
                index, response = missing[j], scrub(response, secrets)
                writer.add(keys[index], response)
                stored.add(index)
                if on_response:
                    on_response(index, response)

            try:
                fresh = self.inner.complete([prompts[i] for i in missing], decoding, store)
                for j, (index, response) in enumerate(zip(missing, fresh, strict=True)):
                    results[index] = scrub(response, secrets)
                    if index not in stored:
                        store(j, response)
            finally:
                writer.flush()
        return [r for r in results if r is not None]

    def close(self) -> None:
        self.inner.close()
        if self.cache is not None:
            self.cache.close()
