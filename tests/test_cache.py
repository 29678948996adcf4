"""The sqlite response cache: hits skip the model, misses are stored the moment they arrive."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from helpers.suite_runner import REPO

from mathcomp_tests.backends.base import OnResponse
from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache
from mathcomp_tests.backends.local.symbolic import SymbolicBackend
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.prompts import build, load_prompt_set, std_names
from mathcomp_tests.types import Condition, Decoding, Prompt, Response


class CountingSymbolic(SymbolicBackend):
    """The real reference backend, counting the prompts it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        self.asked += [p.text for p in prompts]
        return super().complete(prompts, decoding, on_response)


def _prompts(framing: str, n: int = 6) -> list[Prompt]:
    prompt_set = load_prompt_set("hf")
    rows = load(REPO / "fixtures" / "scenarios.csv")[:n]
    return [build(s, Condition(framing, "end"), prompt_set, std_names(prompt_set)) for s in rows]


def test_second_identical_request_is_answered_without_the_model(tmp_path: Path) -> None:
    inner = CountingSymbolic()
    backend = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"))
    first = backend.complete(_prompts("neutral"), Decoding(8))
    second = backend.complete(_prompts("neutral"), Decoding(8))
    assert len(inner.asked) == 6 and backend.calls == 6
    assert [r.text for r in first] == [r.text for r in second]
    assert not any(r.cached for r in first) and all(r.cached for r in second)


def test_only_the_missing_prompts_are_sent_and_order_is_kept(tmp_path: Path) -> None:
    inner = CountingSymbolic()
    backend = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"))
    backend.complete(_prompts("neutral", 3), Decoding(8))
    mixed = _prompts("neutral", 6)
    answers = backend.complete(mixed, Decoding(8))
    assert inner.asked[3:] == [p.text for p in mixed[3:]]
    assert [r.text for r in answers] == [p.scenario.label for p in mixed]
    backend.complete(mixed, Decoding(max_new_tokens=9))
    assert len(inner.asked) == 12, "other decoding settings are other keys"


def test_a_new_process_reads_what_an_earlier_one_stored(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CachedBackend(CountingSymbolic(), ResponseCache(path)).complete(_prompts("direct-less"), Decoding(8))
    later = CountingSymbolic()
    CachedBackend(later, ResponseCache(path)).complete(_prompts("direct-less"), Decoding(8))
    assert later.asked == []
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*), MIN(model) FROM responses").fetchone() == (6, "symbolic")


def test_failed_requests_are_not_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", SymbolicBackend(), Response(text="", error="ServerError: 500"))
    assert len(cache) == 0 and cache.get_many(["k"]) == {}


def _rows_seen_by_another_process(path: Path) -> int:
    """What a second process (an xdist worker, `mathcomp cache stats`) counts in the cache just now."""
    code = (
        "import contextlib, sqlite3, sys\n"
        "with contextlib.closing(sqlite3.connect(sys.argv[1])) as db:\n"
        "    print(db.execute('SELECT COUNT(*) FROM responses').fetchone()[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_answers_stored_after_another_process_read_the_new_cache_are_kept(tmp_path: Path) -> None:
    """Creating the cache must not drop sqlite's locks on it: if it did, the next process to close its
    connection would take itself for the last one and delete the WAL the creator still writes to, so
    every later answer would vanish (and a checkpoint from the orphaned WAL could corrupt the file)."""
    path = tmp_path / "c.sqlite"
    backend = CachedBackend(CountingSymbolic(), ResponseCache(path))
    assert _rows_seen_by_another_process(path) == 0
    backend.complete(_prompts("direct-less"), Decoding(8))
    assert _rows_seen_by_another_process(path) == 6
    assert path.with_name("c.sqlite-wal").exists(), "the WAL of the open cache is still there"
