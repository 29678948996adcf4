"""`mathcomp site` and `mathcomp record --from` keep to their own files: OUT is replaced only when it is empty,
absent or a site the command built (marked by .mathcomp-site), never through a link; a link in a record or a
run folder is never followed out of it; a shard's run folder is no night; the newest night is the newest by
time, one record per run; a build stopped by a signal leaves nothing that the next build keeps, and Ctrl-C
is one line, exit 130, OUT as it was.

The records are stand-ins (summary.json as `mathcomp record --stand-in` writes it) with chosen run ids: no
model runs here."""

from __future__ import annotations

import gzip
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.usage import call, mathcomp

from mathcomp_tests import summary_format
from mathcomp_tests.run.summary import stand_in
from mathcomp_tests.site import folder_swap, index_page

MARKER = ".mathcomp-site"
SECRET = "secret-4711-never-published"
NEWER = "20260115-010000-acme-m-0001"
OLDER = "20251231-230000-acme-m-0002"
UNDATED = "nightly-2025-01-01"

Run = tuple[int, str, str]


def night(
    records: Path, run_id: str, model: str = "hf:acme/m", folder: str | None = None, **fields: object
) -> Path:
    """A stand-in record of ``run_id`` (in the folder ``folder``, its run id by default) with a report.html;
    ``fields`` replace the stand-in's."""
    place = records / (folder or run_id)
    place.mkdir(parents=True)
    summary_format.write(place, stand_in(run_id, model) | fields)
    (place / "report.html").write_text(f"<html><body>report of {run_id}</body></html>", encoding="utf-8")
    return place


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def site_text(out: Path) -> str:
    """Every file of the built site, as one text."""
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def run_cells(out: Path) -> list[str]:
    """The run column of index.html, in order: the latest-night table's rows first, then every night's."""
    return re.findall(r'<td class="run">(.*?)</td>', (out / "index.html").read_text(encoding="utf-8"))


@pytest.fixture
def records(tmp_path: Path) -> Path:
    night(tmp_path / "records", NEWER)
    return tmp_path / "records"


# 1. OUT is the command's own


def test_an_out_holding_the_users_files_is_refused_and_kept(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    code, said, err = call(capsys, "site", str(records), str(out))
    assert code == 2 and said == "" and err.count("\n") == 1, err
    assert f"OUT {out}: " in err and MARKER in err and "expected an empty folder" in err, err
    assert snapshot(out) == {"notes.txt": b"my notes"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "records"], "nothing staged beside it"


@pytest.mark.parametrize("held", ["empty", "files"])
def test_a_symlink_out_is_refused_and_its_target_kept(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], held: str
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    if held == "files":
        (target / "notes.txt").write_text("my notes", encoding="utf-8")
    out = tmp_path / "link"
    out.symlink_to(target)
    code, _, err = call(capsys, "site", str(records), str(out))
    assert code == 2 and err.count("\n") == 1 and f"OUT {out}: a symbolic link" in err, err
    assert out.is_symlink() and snapshot(target) == ({} if held == "empty" else {"notes.txt": b"my notes"})


def test_an_absent_or_empty_out_is_built_marked_and_then_rebuilt(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for out in (tmp_path / "absent", tmp_path / "empty"):
        if out.name == "empty":
            out.mkdir()
        assert call(capsys, "site", str(records), str(out))[0] == 0
        assert (out / MARKER).is_file() and (out / "index.html").is_file()
        (out / "stale.html").write_text("from an older site", encoding="utf-8")
        code, _, err = call(capsys, "site", str(records), str(out))
        assert (code, err) == (0, "") and not (out / "stale.html").exists() and (out / MARKER).is_file()


# 2. a link is never followed out of a record or a run folder


def test_a_link_out_of_a_record_is_never_published(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text(f"<p>{SECRET}</p>", encoding="utf-8")
    records = tmp_path / "records"
    linked_page = night(records, NEWER)
    (linked_page / "report.html").unlink()
    (linked_page / "report.html").symlink_to(secret)
    outside = night(tmp_path / "elsewhere", OLDER, model=SECRET)
    linked_summary = records / OLDER
    linked_summary.mkdir()
    (linked_summary / "summary.json").symlink_to(outside / "summary.json")
    other = night(tmp_path / "elsewhere", "20251230-000000-acme-m-0003", model=SECRET)
    (records / other.name).symlink_to(other, target_is_directory=True)
    out = tmp_path / "site"
    code, said, err = call(capsys, "site", str(records), str(out))
    assert code == 0, err
    lines = err.splitlines()
    assert f"skipped {linked_page / 'report.html'}: a symbolic link" in err, err
    assert f"skipped {linked_summary / 'summary.json'}: a symbolic link" in err, err
    assert f"skipped {records / other.name}: a symbolic link" in err and len(lines) == 3, err
    assert SECRET not in site_text(out) and SECRET not in said
    assert not (out / "nights" / NEWER / "report.html").exists()


def run_folder(tmp_path: Path, shard: object = None) -> Path:
    """A finished run's folder (a stand-in's summary.json with ``shard``, a report.html), outside any records."""
    return night(tmp_path / "reports", "20260201-000000-acme-m-00aa", shard=shard)


def test_record_from_never_follows_a_link_out_of_the_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.html"
    secret.write_text(f"<p>{SECRET}</p>", encoding="utf-8")
    run = run_folder(tmp_path)
    (run / "report.html").unlink()
    (run / "report.html").symlink_to(secret)
    code, said, err = call(capsys, "record", str(tmp_path / "records"), "--from", str(run))
    assert code == 0 and err.count("\n") == 1 and f"{run / 'report.html'}: a symbolic link" in err, err
    record = tmp_path / "records" / run.name
    assert said == f"wrote {record} (summary.json.gz)\n"
    assert SECRET.encode() not in b"".join(gzip.decompress(p.read_bytes()) for p in record.iterdir())

    (run / "report.html").unlink()
    summary = run / "summary.json"
    summary.rename(tmp_path / "summary.json")
    summary.symlink_to(tmp_path / "summary.json")
    code, said, err = call(capsys, "record", str(tmp_path / "again"), "--from", str(run))
    assert code == 1 and said == "" and err.count("\n") == 1, err
    assert err.startswith(f"error: {summary}: a symbolic link"), err
    assert not (tmp_path / "again" / run.name).exists()


# record --from refuses what is no finished run, in one line


def test_a_run_without_summary_json_says_to_use_the_stand_in(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    for run_dir in (tmp_path / "run", tmp_path / "never-started"):
        code, said, err = mathcomp("record", tmp_path / "records", "--from", run_dir)
        assert code == 1 and said == "" and err.count("\n") == 1 and "--stand-in" in err, err
        assert err.startswith(f"error: {run_dir}: no summary.json")
    assert not (tmp_path / "records").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--from", "x", "--stand-in"), "argument --stand-in: not allowed with argument --from"),
        ((), "expected --from RUN_DIR (a finished run) or --stand-in"),
        (("--stand-in", "--model=m", "--baseline=b.txt"), "--baseline goes with --from"),
        (("--from", "x", "--model=m"), "--model and --reason go with --stand-in"),
    ],
)
def test_record_usage_errors_are_one_line(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    code, _, err = mathcomp("record", tmp_path / "records", *args)
    own = args != ("--from", "x", "--stand-in")  # argparse's own error, after its usage lines
    assert code == 2 and said in err.splitlines()[-1] and (err.count("\n") == 1 or not own), err
    assert not (tmp_path / "records").exists()


# 3. a shard is part of a night, not one


@pytest.mark.parametrize("marked", ["shard.json and summary", "shard.json only"])
def test_a_shards_run_folder_is_refused_pointing_at_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], marked: str
) -> None:
    shard = {"index": 1, "count": 2, "source": "option"} if marked.endswith("summary") else None
    run = run_folder(tmp_path, shard=shard)
    (run / "shard.json").write_text("{}", encoding="utf-8")
    code, said, err = call(capsys, "record", str(tmp_path / "records"), "--from", str(run))
    assert code == 2 and said == "" and err.count("\n") == 1, err
    assert f"{run}: a shard's run folder" in err and "mathcomp merge" in err and "sharding.md" in err, err
    assert not (tmp_path / "records" / run.name).exists()


# 4. the latest night is the newest by time, and one record per run


def test_the_latest_night_is_the_newest_by_time_not_the_largest_run_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    for run_id in (OLDER, UNDATED, NEWER):
        night(records, run_id)
    out = tmp_path / "site"
    assert call(capsys, "site", str(records), str(out))[0] == 0
    assert run_cells(out) == [NEWER, NEWER, OLDER, UNDATED]


def test_two_records_of_one_run_are_published_once_with_a_warning_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = tmp_path / "records"
    kept = night(records, NEWER)
    copy = night(records, NEWER, folder=f"{NEWER}-copy")
    out = tmp_path / "site"
    code, said, err = call(capsys, "site", str(records), str(out))
    assert code == 0 and err.count("\n") == 1, err
    assert err.startswith(f"skipped {copy}: ") and f"run {NEWER}" in err and f"published {kept}" in err, err
    assert run_cells(out) == [NEWER, NEWER]
    assert [p.name for p in (out / "nights").iterdir()] == [NEWER]
    assert said.endswith(": 1 night of 1 model, 1 record skipped\n")


# 5. a build stopped halfway


KILLED_BUILD = """
import os, signal, sys
from mathcomp_tests.cli import main
from mathcomp_tests.site import index_page
index_page.page = lambda *args: os.kill(os.getpid(), signal.Signals[sys.argv[1]])
main(sys.argv[2:])
"""
"""`mathcomp site` killed by a signal (argv[1]) while it fills its staging folder."""


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
def test_a_staging_folder_left_by_a_killed_build_is_removed_by_the_next(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], stop: str
) -> None:
    out = tmp_path / "site"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, stop, "site", str(records), str(out)], check=False, timeout=120
    )
    assert killed.returncode == -signal.Signals[stop]
    (left,) = [p for p in tmp_path.iterdir() if p.name.startswith(".site.new-")]
    others = [tmp_path / ".other.new-abcd1234", tmp_path / ".site.new-mine", tmp_path / ".site.notes"]
    for folder in others:
        folder.mkdir()
    code, _, err = call(capsys, "site", str(records), str(out))
    assert code == 0 and err == f"removed {left}: left by a site build that was stopped\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["records", "site", *(p.name for p in others)]
    )


def test_the_staging_folder_of_a_build_still_at_work_is_kept(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    with folder_swap.staged(out) as building:  # another build of the same OUT, at work beside this one
        code, _, err = call(capsys, "site", str(records), str(out))
        assert (code, err) == (0, "") and building.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site"]


def test_ctrl_c_during_a_build_is_one_line_exit_130_and_out_as_it_was(
    records: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    assert call(capsys, "site", str(records), str(out))[0] == 0
    before = snapshot(out)

    def pressed(*args: object) -> str:
        """Ctrl-C while the index is drawn."""
        raise KeyboardInterrupt

    monkeypatch.setattr(index_page, "page", pressed)
    try:
        code, said, err = call(capsys, "site", str(records), str(out))
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped `mathcomp site` (a traceback)")
    assert code == 130 and said == "" and err == f"mathcomp site: interrupted; {out} left as it was\n", err
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site"], "no staging folder left"
