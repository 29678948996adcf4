"""`mathcomp keep`: night records kept on a branch of a real git repository (a bare one in tmp_path as the
remote): nights added one commit each, two jobs pushing at once (a pre-receive hook holds the first push
until the second arrives, so both built on the same tip), retention, records never rewritten, refused
folders, a remote that fails (no credential printed) and a remote named by the current repository. The
records are the suite's own summary.json (one real run), copied as nights."""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import http.server
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.suite_runner import REPO, run_suite
from helpers.usage import call

pytestmark = pytest.mark.xdist_group("test_keep")
"""One worker runs this module, so the suite's record (`record`) is made once."""

ARGS = ("--model=symbolic", "--limit=10", "--framings=neutral,direct-more", "--positions=begin")
BRANCH = "mathcomp-history"


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The summary.json of one real suite run (two cases), as a night's record."""
    run = run_suite(tmp_path_factory.mktemp("suite"), *ARGS)
    assert run.returncode in (0, 1), run.output
    return run.summary


def night(record: dict[str, Any], days_ago: float, model: str = "symbolic", **fields: Any) -> dict[str, Any]:
    """``record`` as a night ``days_ago`` days before now (its run id says when), ``fields`` replaced."""
    when = dt.datetime.now() - dt.timedelta(days=days_ago)
    made = copy.deepcopy(record)
    made["run_id"] = f"{when:%Y%m%d-%H%M%S}-{model}-{abs(hash((days_ago, model))) % 65536:04x}"
    return made | {"model": model, **fields}


def write(folder: Path, *summaries: dict[str, Any], report: bool = False) -> list[str]:
    """Each summary as ``folder/<run-id>/summary.json`` (and a report.html beside it); their run ids."""
    for summary in summaries:
        path = folder / summary["run_id"] / "summary.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(summary))
        if report:
            (path.parent / "report.html").write_text(f"<p>{summary['run_id']}</p>")
    return [s["run_id"] for s in summaries]


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """An empty bare repository: the remote."""
    path = tmp_path / "remote.git"
    git("init", "--quiet", "--bare", str(path))
    return path


def on_branch(remote: Path) -> list[str]:
    """The record folders the branch holds."""
    return git("--git-dir", str(remote), "ls-tree", "--name-only", BRANCH).splitlines()


def subjects(remote: Path) -> list[str]:
    return git("--git-dir", str(remote), "log", "--format=%s", BRANCH).splitlines()


def held(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_dir())


def test_three_nights_each_add_their_records_in_one_commit_and_history_reads_them_all(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    everything = tmp_path / "all"
    expected: list[str] = []
    for n, days_ago in enumerate((3, 2, 1)):
        tonight = tmp_path / f"night{n}"
        added = write(tonight, night(record, days_ago), night(record, days_ago, "other"), report=True)
        expected += added
        code, out, err = call(capsys, "keep", str(tonight), "--remote", str(remote), "--out", str(everything))
        assert code == 0, err
        assert f"pushed {BRANCH} to {remote}: added 2 (" in out and all(r in out for r in added)
        assert held(everything) == sorted(expected)
        assert on_branch(remote) == sorted(expected)
    for run_id in expected:
        kept = everything / run_id
        assert sorted(p.name for p in kept.iterdir()) == ["report.html", "summary.json"]
        assert json.loads((kept / "summary.json").read_text())["run_id"] == run_id
    log = subjects(remote)
    assert len(log) == 3 and all(s.startswith("mathcomp keep: add 2 night record(s): ") for s in log)
    roots = git("--git-dir", str(remote), "rev-list", "--max-parents=0", BRANCH).splitlines()
    assert len(roots) == 1, "the branch starts with the first night's commit, an orphan"
    author = git("--git-dir", str(remote), "log", "-1", "--format=%an <%ae>", BRANCH)
    assert author == "mathcomp-tests <mathcomp-tests@users.noreply.github.com>"

    # the last night again: nothing new, no commit, the records still written out
    code, out, err = call(capsys, "keep", str(tonight), "--remote", str(remote), "--out", str(everything))
    assert code == 0 and f"nothing new for {BRANCH} on {remote}" in out, err
    assert len(subjects(remote)) == 3 and held(everything) == sorted(expected)

    code, out, err = call(capsys, "history", str(everything))
    assert code == 0 and err == "", err
    assert all(run_id in out for run_id in expected)


HOOK = """#!/bin/sh
# Hold each of the first two pushes until both have arrived (or 20 s passed): both built on one tip.
touch "{marks}/$$"
i=0
while [ "$(ls "{marks}" | wc -l)" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
"""


def keep_process(new: Path, remote: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mathcomp_tests",
            "keep",
            str(new),
            "--remote",
            str(remote),
            "--out",
            str(out),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("earlier", [False, True], ids=["no-branch-yet", "a-night-on-the-branch"])
def test_two_jobs_pushing_at_once_both_keep_their_records_one_retrying(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str], earlier: bool
) -> None:
    before: list[str] = []
    if earlier:
        before = write(tmp_path / "earlier", night(record, 2))
        code, _, err = call(
            capsys, "keep", str(tmp_path / "earlier"), "--remote", str(remote), "--out", str(tmp_path / "x")
        )
        assert code == 0, err
    marks = tmp_path / "marks"
    marks.mkdir()
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(HOOK.format(marks=marks))
    hook.chmod(0o755)
    ids = {
        job: write(tmp_path / job, night(record, 1, f"{job}-a"), night(record, 1, f"{job}-b"))
        for job in ("one", "two")
    }
    jobs = {job: keep_process(tmp_path / job, remote, tmp_path / f"{job}-all") for job in ids}
    said = {job: process.communicate(timeout=120) for job, process in jobs.items()}
    for job, process in jobs.items():
        assert process.returncode == 0, said[job]
    retried = [
        job for job, (out, _) in said.items() if "moved (another job pushed first); trying again" in out
    ]
    assert len(retried) == 1, said
    assert len(list(marks.iterdir())) == 3, "two pushes held together, then the retry"
    every = sorted(before + ids["one"] + ids["two"])
    assert on_branch(remote) == every, "no record lost, none doubled"
    assert held(tmp_path / f"{retried[0]}-all") == every
    assert len(subjects(remote)) == 2 + earlier


def test_nights_older_than_keep_days_are_pruned_in_the_same_commit(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    old, recent = night(record, 40), night(record, 20)
    timeless = night(record, 0, run_id="manual-symbolic")
    write(tmp_path / "before", old, recent, timeless)
    code, _, err = call(
        capsys, "keep", str(tmp_path / "before"), "--remote", str(remote), "--out", str(tmp_path / "x")
    )
    assert code == 0, err
    today, too_old = night(record, 0), night(record, 31, "late")
    write(tmp_path / "tonight", today, too_old)
    everything = tmp_path / "all"
    code, out, err = call(
        capsys, "keep", str(tmp_path / "tonight"), "--remote", str(remote), "--keep-days", "30",
        "--out", str(everything),
    )  # fmt: skip
    assert code == 0, err
    assert f"added 1 ({today['run_id']}), pruned 1 ({old['run_id']})" in out
    assert f"not kept: {too_old['run_id']} is older than 30 days" in err
    kept = sorted([recent["run_id"], timeless["run_id"], today["run_id"]])
    assert on_branch(remote) == kept and held(everything) == kept
    changed = git(
        "--git-dir", str(remote), "show", "--no-renames", "--name-status", "--format=%s", BRANCH
    ).splitlines()
    assert changed[0] == (
        f"mathcomp keep: add 1 night record(s): {today['run_id']}; prune 1 older than 30 days: {old['run_id']}"
    )
    assert sorted(line.split("\t") for line in changed[1:] if line) == [
        ["A", f"{today['run_id']}/summary.json"],
        ["D", f"{old['run_id']}/summary.json"],
    ]


def test_a_record_on_the_branch_is_never_rewritten_and_a_folder_without_a_summary_is_not_pushed(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    first = night(record, 1)
    write(tmp_path / "before", first)
    code, _, err = call(
        capsys, "keep", str(tmp_path / "before"), "--remote", str(remote), "--out", str(tmp_path / "x")
    )
    assert code == 0, err
    kept_text = git("--git-dir", str(remote), "show", f"{BRANCH}:{first['run_id']}/summary.json")

    tonight = tmp_path / "tonight"
    write(tonight, first | {"cases_failed": 2})
    good = write(tonight, night(record, 0))
    (tonight / "20261101-031700-no-summary-0001").mkdir()
    (tonight / "20261101-031700-no-summary-0001" / "report.html").write_text("<p>no summary</p>")
    write(tonight, night(record, 0, "damaged", run_id=".git"))
    write(tonight, night(record, 0, "renamed"))
    renamed = next(tonight.glob("*-renamed-*"))
    renamed.rename(tonight / "20261101-031700-renamed-0002")
    code, out, err = call(
        capsys, "keep", str(tonight), "--remote", str(remote), "--out", str(tmp_path / "all")
    )
    assert code == 0, err
    lines = sorted(err.splitlines())
    assert lines == sorted(
        [
            f"kept as it is: {first['run_id']} is on {BRANCH} with other content; records are never "
            "rewritten, so this copy was not pushed",
            f"not kept: {tonight / '.git'}: '.git' is not a run id (expected one path component of letters, "
            "digits, '.', '_', '-', '+', starting with a letter or digit)",
            f"not kept: {tonight / '20261101-031700-no-summary-0001'}: not a finished run folder (no summary.json)",
            f"not kept: {tonight / '20261101-031700-renamed-0002' / 'summary.json'}: run_id "
            f"{json.loads((tonight / '20261101-031700-renamed-0002' / 'summary.json').read_text())['run_id']!r}; "
            "expected the folder's name, '20261101-031700-renamed-0002'",
        ]
    )
    assert on_branch(remote) == sorted([first["run_id"], *good])
    assert git("--git-dir", str(remote), "show", f"{BRANCH}:{first['run_id']}/summary.json") == kept_text
    assert json.loads((tmp_path / "all" / first["run_id"] / "summary.json").read_text()) == first


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
    monkeypatch.setattr("mathcomp_tests.history_branch.git.NETWORK_S", 1.0)
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
