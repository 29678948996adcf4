"""`mathcomp keep` against remotes that fail or are named by the current repository: a remote that does not exist,
one that refuses or never answers (one line, exit 1, no credential printed), a remote name resolved from the checkout
with its extraheader, and usage errors. The records are the suite's own summary.json, as in tests/test_keep.py."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.keep_nights import BRANCH, git, held, night, on_branch, record_fixture, remote_fixture, write  # noqa: F401 - the `record` and `remote` fixtures
from helpers.usage import call

pytestmark = pytest.mark.xdist_group("test_keep_remotes")


def test_a_remote_that_does_not_exist_is_one_line_exit_1(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "new", night(record, 0))
    missing = tmp_path / "nowhere.git"
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(missing), "--out", str(tmp_path / "all")
    )
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {missing}: git ls-remote failed: "), err
    assert not (tmp_path / "all").exists()


def test_a_token_in_the_remote_url_is_never_printed(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "new", night(record, 0))
    url = "https://x-access-token:SECRET@127.0.0.1:9/repo.git"
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", url, "--out", str(tmp_path / "all")
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("error: https://<credentials>@127.0.0.1:9/repo.git: git ls-remote failed: ")
    assert "SECRET" not in out + err


def test_a_push_the_remote_refuses_is_one_line_naming_the_remote_and_what_it_said(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'this branch is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    write(tmp_path / "new", night(record, 0))
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(remote), "--out", str(tmp_path / "all")
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: {remote}: git push failed: ") and "this branch is protected" in err
    assert "trying again" not in out, "the branch did not move: no retry"
    assert git("--git-dir", str(remote), "for-each-ref") == ""


@pytest.fixture
def silent_host() -> Iterator[str]:
    """A host that takes the connection and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/repo.git"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    server.close()


def test_a_remote_that_never_answers_is_given_up_after_the_timeout(
    tmp_path: Path,
    silent_host: str,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("mathcomp_tests.keep.git.NETWORK_S", 1.0)
    write(tmp_path / "new", night(record, 0))
    code, _, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", silent_host, "--out", str(tmp_path / "all")
    )
    assert code == 1
    assert err == f"error: {silent_host}: git ls-remote gave no answer within 1 s\n"


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A git host that asks for a password on every request (git would prompt for one on a terminal),
    noting the Authorization header each request carried."""

    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append(self.headers.get("Authorization", ""))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_host() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def work_repo(tmp_path: Path, origin: str) -> Path:
    """A checkout (`git init`) whose origin is ``origin``."""
    work = tmp_path / "work"
    git("init", "--quiet", str(work))
    git("remote", "add", "origin", origin, cwd=work)
    return work


def test_a_remote_name_of_the_current_repository_is_its_url_and_the_checkout_is_left_alone(
    tmp_path: Path,
    remote: Path,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = work_repo(tmp_path, str(remote))
    ids = write(tmp_path / "new", night(record, 0))
    monkeypatch.chdir(work)
    for who in ("AUTHOR", "COMMITTER"):  # the job's own identity, where it sets one, wins
        monkeypatch.setenv(f"GIT_{who}_NAME", "Night Job")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "night@example.invalid")
    code, out, err = call(capsys, "keep", str(tmp_path / "new"), "--remote", "origin", "--out", "../all")
    assert code == 0, err
    assert f"pushed {BRANCH} to origin ({remote}): added 1" in out
    assert on_branch(remote) == ids and held(tmp_path / "all") == ids
    author = git("--git-dir", str(remote), "log", "-1", "--format=%an <%ae> %cn", BRANCH)
    assert author == "Night Job <night@example.invalid> Night Job"
    assert git("for-each-ref", cwd=work) == "" and not list((work / ".git" / "objects").glob("??"))


def test_the_checkout_s_extraheader_authenticates_the_remote_and_is_never_printed(
    tmp_path: Path,
    refusing_host: str,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As actions/checkout leaves the job's token: `http.<host>.extraheader` in the checkout's config."""
    header = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46c2VjcmV0LXRva2Vu"
    work = work_repo(tmp_path, refusing_host + "owner/repo.git")
    git("config", f"http.{refusing_host}.extraheader", header, cwd=work)
    write(tmp_path / "new", night(record, 0))
    monkeypatch.chdir(work)
    code, out, err = call(capsys, "keep", str(tmp_path / "new"), "--remote", "origin", "--out", "../all")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: origin ({refusing_host}owner/repo.git): git ls-remote failed: ")
    assert _Refusing.seen and set(_Refusing.seen) == {header.split(": ", 1)[1]}
    assert "eC1hY2Nlc3Mt" not in out + err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["missing", "--remote", "r", "--out", "all"], "missing: no such folder; expected a folder of night"),
        (["new", "--remote", "r", "--keep-days", "-1", "--out", "all"], "expected a whole number of days"),
        (["new", "--remote", "r", "--keep-days", "week", "--out", "all"], "got 'week'"),
        (["new", "--remote", "r", "--branch", "a..b", "--out", "all"], "'a..b' is not a branch name"),
        (["new", "--remote", "r", "--out", "new"], "expected a folder apart from NEW_RECORDS"),
        (
            ["new", "--remote", "r", "--out", "mine"],
            "mine/notes.txt: not a night record; expected a folder of",
        ),
    ],
)
def test_usage_errors_exit_2_in_one_line_before_git_is_asked(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    expected: str,
) -> None:
    (tmp_path / "new").mkdir()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a user's own file")
    monkeypatch.chdir(tmp_path)
    code, out, err = call(capsys, "keep", *argv)
    assert code == 2 and out == "", err
    assert err.splitlines()[-1].startswith("mathcomp keep: error: ") and expected in err.splitlines()[-1], err
