"""The response cache keeps no secret: whatever path stores an answer (put_many: the batch backends store
there directly), and whatever an older version stored (a row with a key in it is read redacted)."""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import time
from pathlib import Path

import pytest
from test_cache import CountingSymbolic, _prompts

from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache, Row, cache_keys
from mathcomp_tests.backends.secrets import REDACTED
from mathcomp_tests.types import Decoding, Response


def _stored(path: Path) -> list[tuple[str, dict[str, object]]]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [(t, json.loads(m)) for t, m in db.execute("SELECT text, meta FROM responses ORDER BY key")]


def test_put_many_stores_answers_without_the_run_s_keys_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = f"sk-stored-{secrets.token_hex(8)}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    cache = ResponseCache(tmp_path / "responses.sqlite")
    echoed = Response(f"more (x-api-key: {key})", meta={"served_model": f"m {key}", "finish_reason": "stop"})
    plain = Response("less", meta={"finish_reason": "stop"})
    cache.put_many([Row("a", "m", "", echoed, time.time()), Row("b", "m", "", plain, time.time())])
    cache.close()
    (text_a, meta_a), (text_b, meta_b) = _stored(tmp_path / "responses.sqlite")
    assert text_a == "more (x-api-key: <ANTHROPIC_API_KEY>)" and meta_a[REDACTED] is True
    assert meta_a["served_model"] == "m <ANTHROPIC_API_KEY>"
    assert text_b == "less" and REDACTED not in meta_b, "an answer with no secret in it is stored as it came"
    assert key.encode() not in (tmp_path / "responses.sqlite").read_bytes()


def test_a_row_an_older_version_stored_with_a_key_in_it_is_read_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = f"sk-older-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    path = tmp_path / "responses.sqlite"
    backend = CountingSymbolic()
    prompts, decoding = _prompts("neutral", 2), Decoding(max_new_tokens=8)
    ResponseCache(path).close()
    with contextlib.closing(sqlite3.connect(path)) as db, db:  # as a version before redaction wrote it
        for k in cache_keys(backend, prompts, decoding):
            db.execute("INSERT INTO responses VALUES (?,?,?,?,?,?,?,?)", (k, "m", "", f"more {key}", 1, 1, "{}", 0.0))
    got = CachedBackend(backend, ResponseCache(path)).complete(prompts, decoding)
    assert backend.asked == [], "answered from the cache"
    assert [r.text for r in got] == ["more <OPENAI_API_KEY>"] * 2 and all(r.meta[REDACTED] for r in got)
