"""Resolving --dataset: the bundled scenarios, a user's file, the original downloaded once; and the policies.

Downloads come from a real HTTP server on 127.0.0.1 that serves the copy named by $MATHCOMP_ORIGINAL, the
wrong bytes, a 404, or half the file before it drops the connection.
"""

from __future__ import annotations

import csv
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mathcomp_tests.data.datasets import ORIGINAL, ORIGINAL_SHA256, URL_VARIABLE, resolve
from mathcomp_tests.data.scenarios import COLUMNS, DatasetError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios.csv"
MISLABELLED = {"126": "less", "129": "less", "242": "equal"}


class Mirror:
    """A real HTTP server on 127.0.0.1 serving ``body``: whole, half then a dropped connection, or a 404."""

    def __init__(self, body: bytes):
        self.body = body
        self.mode = "ok"
        self.hits = 0
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                mirror.hits += 1
                if mirror.mode == "404":
                    self.send_error(404, "Not Found")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Content-Length", str(len(mirror.body)))
                self.end_headers()
                if mirror.mode == "drop":
                    self.wfile.write(mirror.body[: len(mirror.body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(mirror.body)

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/MathComp_Dataset.csv"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(autouse=True)
def local_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests to 127.0.0.1 never go through a proxy, and no test inherits a mirror from the shell."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.delenv(URL_VARIABLE, raising=False)


@pytest.fixture
def original() -> Path:
    path = os.environ.get("MATHCOMP_ORIGINAL")
    if not path:
        pytest.skip("set MATHCOMP_ORIGINAL to the original MathComp_Dataset.csv")
    return Path(path)


def serve(body: bytes) -> Iterator[Mirror]:
    mirror = Mirror(body)
    try:
        yield mirror
    finally:
        mirror.close()


@pytest.fixture
def original_mirror(original: Path) -> Iterator[Mirror]:
    yield from serve(original.read_bytes())


@pytest.fixture
def wrong_mirror() -> Iterator[Mirror]:
    """Serves our own scenarios under the original's name: a valid CSV with the wrong checksum."""
    yield from serve(FIXTURES.read_bytes())


def cached_files(cache: Path) -> list[str]:
    return sorted(p.name for p in (cache / "datasets").glob("*") if not p.name.endswith(".lock"))


def test_the_original_is_downloaded_once_verified_and_then_used_offline(
    original_mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(URL_VARIABLE, original_mirror.url)
    loaded = resolve(ORIGINAL, None, tmp_path)
    assert original_mirror.hits == 1
    assert hashlib.sha256(loaded.path.read_bytes()).hexdigest() == ORIGINAL_SHA256
    assert loaded.path.parent == tmp_path / "datasets"
    assert cached_files(tmp_path) == [loaded.path.name]

    assert loaded.policy == "keep"
    assert len(loaded.scenarios) == 300
    assert {f.id for f in loaded.kept_invalid} == set(MISLABELLED)
    assert loaded.excluded == []
    published = {s.id: s.label for s in loaded.scenarios if s.id in MISLABELLED}
    assert published == MISLABELLED
    header = loaded.header()
    assert header[0].startswith(f"dataset: {ORIGINAL} ({loaded.path}), 300 scenarios, policy keep")
    assert sum("[label]" in line for line in header) == 3
    assert any(line.startswith("  audit: 18 literal-reading finding(s)") for line in header)

    original_mirror.close()
    again = resolve(ORIGINAL, None, tmp_path)
    assert original_mirror.hits == 1
    assert [s.id for s in again.scenarios] == [s.id for s in loaded.scenarios]


def test_strict_stops_at_the_first_failing_row_with_its_audit_line(original: Path, tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        resolve(str(original), None, tmp_path)
    message = str(info.value)
    assert message.startswith(
        f"{original}: 3 row(s) fail verification; the first:\n  ID 126 (line 127) [label]"
    )
    assert "literal reading: more (labelled less)" in message
    assert "--dataset-policy=skip-invalid" in message and "--dataset-policy=keep" in message
    assert "ID 129" not in message


def test_skip_invalid_leaves_the_mislabelled_rows_out_and_lists_them(original: Path, tmp_path: Path) -> None:
    loaded = resolve(str(original), "skip-invalid", tmp_path)
    assert len(loaded.scenarios) == 297
    assert not {s.id for s in loaded.scenarios} & set(MISLABELLED)
    assert [f.id for f in loaded.excluded] == ["126", "129", "242"]
    assert loaded.kept_invalid == []
    assert "  left out (3):" in loaded.header()


def test_a_wrong_checksum_is_refused_and_nothing_is_cached(wrong_mirror: Mirror, tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        resolve(ORIGINAL, None, tmp_path, url=wrong_mirror.url)
    message = str(info.value)
    assert f"the file downloaded from {wrong_mirror.url} has sha256 " in message
    assert f"not the pinned {ORIGINAL_SHA256}" in message
    assert "nothing was cached" in message
    assert cached_files(tmp_path) == []


def test_a_dropped_connection_is_reported_and_nothing_is_cached(wrong_mirror: Mirror, tmp_path: Path) -> None:
    wrong_mirror.mode = "drop"
    size = len(wrong_mirror.body)
    with pytest.raises(DatasetError) as info:
        resolve(ORIGINAL, None, tmp_path, url=wrong_mirror.url)
    message = str(info.value)
    assert f"the connection closed after {size // 2} of {size} bytes" in message
    assert "nothing was cached" in message
    assert cached_files(tmp_path) == []


def test_an_http_error_is_named_and_a_later_good_download_still_works(
    original_mirror: Mirror, tmp_path: Path
) -> None:
    original_mirror.mode = "404"
    with pytest.raises(DatasetError, match="HTTP 404 Not Found; nothing was cached"):
        resolve(ORIGINAL, None, tmp_path, url=original_mirror.url)
    assert cached_files(tmp_path) == []
    original_mirror.mode = "ok"
    assert len(resolve(ORIGINAL, "skip-invalid", tmp_path, url=original_mirror.url).scenarios) == 297


def test_a_damaged_cached_copy_is_downloaded_again(original_mirror: Mirror, tmp_path: Path) -> None:
    path = resolve(ORIGINAL, None, tmp_path, url=original_mirror.url).path
    path.write_text("ID,sentence1\n", encoding="utf-8")
    assert len(resolve(ORIGINAL, None, tmp_path, url=original_mirror.url).scenarios) == 300
    assert original_mirror.hits == 2


def test_no_server_at_all_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/MathComp_Dataset.csv"
    with pytest.raises(DatasetError, match="cannot download the original MathComp dataset from .*refused"):
        resolve(ORIGINAL, None, tmp_path, url=url, timeout=5)


def write_rows(path: Path) -> Path:
    """Three rows: one good, one whose label the equations contradict, one whose equation is not arithmetic."""
    base = {
        "sentence1": "[PERSON_A] paid $5 for lunch and $3 for coffee.",
        "sentence2": "[PERSON_B] paid $4 for lunch and $4 for a snack.",
        "category": "Dining",
        "studied_quantity": "money",
        "equation_sentence1": "5 + 3",
        "equation_sentence2": "4 + 4",
        "task": "buying lunch",
        "natural_language_coefficient": "FALSE",
    }
    rows = [
        {**base, "ID": "1", "result_comparison": "equal"},
        {**base, "ID": "2", "result_comparison": "more"},
        {**base, "ID": "3", "result_comparison": "equal", "equation_sentence2": "4 + four"},
    ]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_the_three_policies_on_a_users_file(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "mine.csv")
    with pytest.raises(DatasetError) as info:
        resolve(str(path), None, tmp_path)
    assert "2 row(s) fail verification; the first:\n  ID 2 (line 3) [label]" in str(info.value)
    assert f"\nmathcomp audit {path} lists every finding;" in str(info.value), "a command that exists"

    skipped = resolve(str(path), "skip-invalid", tmp_path)
    assert [s.id for s in skipped.scenarios] == ["1"]
    assert [(f.id, f.kind) for f in skipped.excluded] == [("2", "label"), ("3", "equation")]
    header = skipped.header()
    assert header[0] == f"dataset: {path}, 1 scenarios, policy skip-invalid"
    assert header[1] == "  left out (2):"
    assert header[2].startswith("    ID 2 (line 3) [label]") and header[3].startswith(
        "    ID 3 (line 4) [equation]"
    )

    kept = resolve(str(path), "keep", tmp_path)
    assert [(s.id, s.label) for s in kept.scenarios] == [("1", "equal"), ("2", "more")]
    assert [f.id for f in kept.kept_invalid] == ["2"] and [f.id for f in kept.excluded] == ["3"]
    assert "  kept with the published label although it fails verification (1):" in kept.header()


def test_the_default_is_our_own_scenarios_strictly(tmp_path: Path) -> None:
    loaded = resolve(None, None, tmp_path)
    assert loaded.path == FIXTURES and loaded.policy == "strict"
    assert len(loaded.scenarios) == 300
    assert (loaded.excluded, loaded.kept_invalid, loaded.notes) == ([], [], [])
    assert loaded.header() == [f"dataset: {FIXTURES}, 300 scenarios, policy strict"]
    assert not (tmp_path / "datasets").exists()


def test_a_policy_that_does_not_exist_or_leaves_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unknown dataset policy 'lenient'; expected one of strict, skip-"):
        resolve(None, "lenient", tmp_path)
    path = write_rows(tmp_path / "mine.csv")
    text = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([text[0], text[2]]) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no row passes verification, so skip-invalid leaves nothing"):
        resolve(str(path), "skip-invalid", tmp_path)
