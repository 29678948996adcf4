"""What `mathcomp keep` refuses: a branch that holds anything but night records (a code branch: nothing
pushed, nothing pruned), a --branch that is not a plain branch name, a --keep-days further back than a date
goes; and what it never prints: a token of the remote's URL, in its userinfo or its query string."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.keep_nights import BRANCH, git, held, night, on_branch, record_fixture, remote_fixture, write  # noqa: F401 - the `record` and `remote` fixtures
from helpers.usage import call

from mathcomp_tests.keep import git as keep_git
from mathcomp_tests.keep import tree
from mathcomp_tests.keep.nights import Night

pytestmark = pytest.mark.xdist_group("test_keep_refusals")
"""One worker runs this module, so the suite's record (`record`) is made once."""

OLD_NAME = "20200101-000000-build-0001"
"""A folder of a code branch whose name parses as a run id of a night long past."""


def code_branch(tmp_path: Path, remote: Path, files: dict[str, str], branch: str = "main") -> str:
    """``files`` (path: text) committed as ``branch`` of ``remote``; the branch's tip."""
    work = tmp_path / "code"
    git("init", "--quiet", str(work))
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git("add", "--all", cwd=work)
    git(
        "-c",
        "user.name=Dev",
        "-c",
        "user.email=dev@example.invalid",
        "commit",
        "--quiet",
        "-m",
        "code",
        cwd=work,
    )
    git("push", "--quiet", str(remote), f"HEAD:refs/heads/{branch}", cwd=work)
    return git("--git-dir", str(remote), "rev-parse", branch)


@pytest.mark.parametrize(
    ("files", "stray"),
    [
        ({"README.md": "# code\n", f"{OLD_NAME}/build.py": "print()\n"}, "README.md, not a night record"),
        ({f"{OLD_NAME}/build.py": "print()\n"}, f"{OLD_NAME}/build.py, not a file of a night record"),
        (
            {f"{OLD_NAME}/summary.json": "{}", f"{OLD_NAME}/more/notes.txt": "x"},
            f"{OLD_NAME}/more, not a file of a night record",
        ),
        ({f"{OLD_NAME}/report.html": "<p></p>"}, f"{OLD_NAME}/, a folder without summary.json"),
    ],
    ids=["a-file-beside", "a-run-id-folder-of-code", "a-folder-in-a-record", "no-summary"],
)
def test_a_branch_holding_anything_but_records_is_refused_and_left_as_it_is(
    tmp_path: Path,
    remote: Path,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    stray: str,
) -> None:
    tip = code_branch(tmp_path, remote, files)
    write(tmp_path / "new", night(record, 0))
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(remote), "--branch", "main",
        "--keep-days", "30", "--out", str(tmp_path / "all"),
    )  # fmt: skip
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err == (
        f"mathcomp keep: error: --branch main: main on {remote} holds {stray}; "
        "expected a branch of night records only (<run-id>/ folders holding a summary, and its report and "
        f"diff), such as {BRANCH}, or a branch that is not there yet\n"
    )
    assert git("--git-dir", str(remote), "rev-parse", "main") == tip, "nothing pushed, nothing pruned"
    assert git("--git-dir", str(remote), "for-each-ref", "--format=%(refname)") == "refs/heads/main"
    assert not (tmp_path / "all").exists()


def test_only_a_record_is_pruned_never_a_folder_named_as_an_old_run_id(tmp_path: Path, remote: Path) -> None:
    """The tree itself prunes records alone, whatever calls it."""
    summary = json.dumps({"run_id": OLD_NAME}).encode()
    old_record = "20200102-000000-symbolic-0002"
    code_branch(tmp_path, remote, {f"{OLD_NAME}/build.py": "print()\n", f"{old_record}/summary.json": "{}"})
    tip = git("--git-dir", str(remote), "rev-parse", "main")
    new = Night("20991231-000000-symbolic-0003", {"summary.json": summary})
    cutoff = dt.datetime(2021, 1, 1)
    made, plan = tree.next_tree(remote, tip, [new], cutoff)
    assert plan.pruned == [old_record] and plan.added == [new.run_id]
    assert sorted(e.name for e in tree.entries(remote, made)) == [OLD_NAME, new.run_id]


def test_a_record_whose_summary_is_a_link_is_not_pushed(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A record on the branch holds its summary.json: a linked one (not taken along) is no record."""
    (run_id,) = write(tmp_path / "elsewhere", night(record, 0))
    linked = tmp_path / "new" / run_id
    linked.mkdir(parents=True)
    (linked / "summary.json").symlink_to(tmp_path / "elsewhere" / run_id / "summary.json")
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(remote), "--out", str(tmp_path / "all")
    )
    assert code == 0 and f"nothing new for {BRANCH}" in out, err
    assert err == f"not kept: {linked / 'summary.json'}: a link; expected the record's own file\n"
    assert git("--git-dir", str(remote), "for-each-ref") == ""


@pytest.mark.parametrize(
    ("option", "reason"),
    [
        (["--branch", "HEAD"], "'HEAD' names the checked-out commit, not a branch"),
        (["--branch", "FETCH_HEAD"], "'FETCH_HEAD' names one of git's own refs, not a branch"),
        (["--branch", "@"], "'@' is git's name for HEAD, not a branch"),
        (["--branch=-x"], "'-x' starts with '-' (it would read as an option)"),
        (["--branch", "refs/heads/x"], "'refs/heads/x' is a full ref name; give the name alone (x)"),
        (["--branch", "refs/x"], "'refs/x' is a full ref name; give the name alone"),
        (["--branch", "a..b"], "'a..b' is not a branch name git accepts"),
        (["--branch", "@{-1}"], "'@{-1}' is not a branch name git accepts"),
    ],
)
def test_a_branch_that_is_not_a_plain_branch_name_is_refused_in_one_line(
    tmp_path: Path,
    remote: Path,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    option: list[str],
    reason: str,
) -> None:
    write(tmp_path / "new", night(record, 0))
    code, out, err = call(
        capsys,
        "keep",
        str(tmp_path / "new"),
        "--remote",
        str(remote),
        *option,
        "--out",
        str(tmp_path / "all"),
    )
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("mathcomp keep: error: --branch: ") and err.endswith(
        f"{reason}; expected a plain branch name, such as {BRANCH}\n"
    ), err
    assert git("--git-dir", str(remote), "for-each-ref") == "", "nothing pushed"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://h/r.git?access_token=SECRET", "https://h/r.git?access_token=<credentials>"),
        (
            "'https://h/r.git?a=1&token=SECRET/': failed",
            "'https://h/r.git?a=<credentials>&token=<credentials>': failed",
        ),
        ("https://h/r?SECRET#f", "https://h/r?<credentials>#f"),
        ("https://user:SECRET@h/r", "https://<credentials>@h/r"),
        ("https://user:SEC@RET@h/r and https://h/s", "https://<credentials>@h/r and https://h/s"),
        ("https://user:SECRET/x@h/r", "https://<credentials>@h/r"),
        ("HTTPS://SECRET@h/r?x=SECRET", "HTTPS://<credentials>@h/r?x=<credentials>"),
        ("https://h/r/info/refs?service=git-upload-pack", "https://h/r/info/refs?service=git-upload-pack"),
        ("https://h/r: not found", "https://h/r: not found"),
        ("https://h/r?token=SECRET: failed (x)", "https://h/r?token=<credentials>: failed (x)"),
        ("(https://h/r?token=SECRET)", "(https://h/r?token=<credentials>)"),
    ],
)
def test_redact_takes_the_userinfo_and_the_query_values_out_of_a_url(text: str, shown: str) -> None:
    assert keep_git.redact(text) == shown


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:9/repo.git?access_token=SECRET",
        "https://127.0.0.1:9/repo.git?user=me&access_token=SECRET",
        "https://user:SECRET@127.0.0.1:9/repo",
        "https://user:SEC@RET@127.0.0.1:9/repo",
        "https://user:SECRET/x@127.0.0.1:9/repo",
    ],
)
def test_a_token_in_the_remote_url_s_userinfo_or_query_is_never_printed(
    tmp_path: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str], url: str
) -> None:
    """Nothing listens on 127.0.0.1:9 (discard): the call fails at once, and its message is printed."""
    write(tmp_path / "new", night(record, 0))
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", url, "--out", str(tmp_path / "all")
    )
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("error: https://") and ": git ls-remote failed: " in err, err
    assert "SECRET" not in out + err and "RET" not in out + err, err


def test_a_token_in_a_named_remote_s_url_is_never_printed(
    tmp_path: Path,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "work"
    git("init", "--quiet", str(work))
    git("remote", "add", "origin", "https://me:SEC@RET@127.0.0.1:9/repo.git?token=SECRET", cwd=work)
    write(tmp_path / "new", night(record, 0))
    monkeypatch.chdir(work)
    code, out, err = call(capsys, "keep", str(tmp_path / "new"), "--remote", "origin", "--out", "../all")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("error: origin (https://<credentials>@127.0.0.1:9/repo.git?token=<credentials>): ")
    assert "SEC" not in out + err and "RET" not in out + err, err


def _days_back() -> int:
    """The most days a date goes back from today: to 1 January of the year 1."""
    return (dt.date.today() - dt.date.min).days


@pytest.mark.parametrize("days", ["800000", str(10**12), str(10**40)])
def test_a_keep_days_further_back_than_a_date_goes_is_a_usage_error(
    tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str], days: str
) -> None:
    (tmp_path / "new").mkdir()
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(remote), "--keep-days", days,
        "--out", str(tmp_path / "all"),
    )  # fmt: skip
    assert code == 2 and out == "" and "Traceback" not in err, err
    last = err.splitlines()[-1]
    assert last.startswith("mathcomp keep: error: argument --keep-days: ") and last.endswith(
        f"expected at most {_days_back()} days (back to 1 January of the year 1; 0 keeps every night), "
        f"got {days!r}"
    ), err


def test_the_longest_keep_days_keeps_every_night(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    ids = write(tmp_path / "new", night(record, 3650), night(record, 0))
    code, out, err = call(
        capsys, "keep", str(tmp_path / "new"), "--remote", str(remote), "--keep-days", str(_days_back()),
        "--out", str(tmp_path / "all"),
    )  # fmt: skip
    assert code == 0, err
    assert on_branch(remote) == sorted(ids) and held(tmp_path / "all") == sorted(ids)
