"""`mathcomp keep`: night records kept on a branch of a real git repository (a bare one in tmp_path as the
remote): nights added one commit each, two jobs pushing at once (a pre-receive hook holds the first push
until the second arrives, so both built on the same tip), retention, records never rewritten, refused
folders, a remote that fails (no credential printed) and a remote named by the current repository. The
records are the suite's own summary.json (one real run), copied as nights."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.keep_nights import (  # noqa: F401 - the `record` and `remote` fixtures
    BRANCH,
    git,
    held,
    night,
    on_branch,
    record_fixture,
    remote_fixture,
    subjects,
    write,
)
from helpers.suite_runner import REPO
from helpers.usage import call

pytestmark = pytest.mark.xdist_group("test_keep")
"""One worker runs this module, so the suite's record (`record`) is made once."""


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


def keep_process(new: Path, remote: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
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
            *extra,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("rolled", [False, True], ids=["every-commit", "keep-days-rolls-history"])
@pytest.mark.parametrize("earlier", [False, True], ids=["no-branch-yet", "a-night-on-the-branch"])
def test_two_jobs_pushing_at_once_both_keep_their_records_one_retrying(
    tmp_path: Path,
    remote: Path,
    record: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    earlier: bool,
    rolled: bool,
) -> None:
    """Both jobs' records land, one job retrying; with --keep-days each push replaces the history, over
    the tip it was built on only (a lease), so the job that lost the race still retries and loses nothing."""
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
    extra = ("--keep-days", "30") if rolled else ()
    jobs = {job: keep_process(tmp_path / job, remote, tmp_path / f"{job}-all", *extra) for job in ids}
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
    assert len(subjects(remote)) == (1 if rolled else 2 + earlier)


def test_nights_older_than_keep_days_are_pruned_and_the_history_rolled_with_them(
    tmp_path: Path, remote: Path, record: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    old, recent = night(record, 40), night(record, 20)
    timeless = night(record, 0, run_id="manual-symbolic")
    write(tmp_path / "before", old, recent, timeless)
    code, _, err = call(
        capsys, "keep", str(tmp_path / "before"), "--remote", str(remote), "--out", str(tmp_path / "x")
    )
    assert code == 0, err
    pruned_blob = git("--git-dir", str(remote), "rev-parse", f"{BRANCH}:{old['run_id']}/summary.json")
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
    assert subjects(remote) == [
        f"mathcomp keep: add 1 night record(s): {today['run_id']}; prune 1 older than 30 days: {old['run_id']}"
    ], "with --keep-days the branch keeps one commit: its history is rolled with the nights pruned"
    clone = tmp_path / "clone.git"
    git("clone", "--quiet", "--bare", "--single-branch", "--branch", BRANCH, str(remote), str(clone))
    held_objects = git("--git-dir", str(clone), "rev-list", "--objects", "--all").split()
    assert pruned_blob not in held_objects, "a clone of the branch holds nothing of a pruned night"
    assert git("--git-dir", str(clone), "rev-parse", f"{BRANCH}:{recent['run_id']}/summary.json") in held_objects


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
