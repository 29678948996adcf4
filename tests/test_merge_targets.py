"""Where `mathcomp merge` writes: `--out` through `..` replaced a complete merged run with an incomplete one
whose run id was `..`; a symbolic link, a dangling one or an `--out` that cannot be written, and an
`--update-baseline` onto a folder or into a shard's folder, are each one usage line before anything is
written; a merged run's default id is dated like every run's; a merge stopped midway leaves nothing at
`--out`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.merge_cli import finished_shards, merge

from mathcomp_tests.merge import GateOptions
from mathcomp_tests.merge import merge as merge_in_process
from mathcomp_tests.records.results import run_started

pytestmark = pytest.mark.xdist_group("merge")


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return finished_shards(tmp_path_factory.mktemp("merge-targets"))


def _one_usage_line(done: Any, says: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_an_out_through_dotdot_never_replaces_the_folder_it_names(shards: list[Path], tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    first = merge(*shards, "--out", keep)
    assert first.returncode == 0, first.stdout + first.stderr
    before = (keep / "summary.json").read_bytes()
    _one_usage_line(merge(*shards, "--out", f"{keep}/new/.."), "a path through '..'")
    assert (keep / "summary.json").read_bytes() == before and not (keep / "new").exists()


def test_a_symbolic_link_or_an_out_that_cannot_be_written_is_one_line(
    shards: list[Path], tmp_path: Path
) -> None:
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    _one_usage_line(merge(*shards, "--out", dangling), "is a symbolic link")
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "link").symlink_to(empty)
    _one_usage_line(merge(*shards, "--out", tmp_path / "link"), "is a symbolic link")
    assert not any(empty.iterdir())
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    _one_usage_line(merge(*shards, "--out", a_file / "merged"), "cannot be written")


def test_an_update_baseline_the_merge_may_not_write_is_refused_first(
    shards: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "merged"
    _one_usage_line(merge(*shards, "--out", out, "--update-baseline", tmp_path), "is a folder")
    inside = shards[0] / "baseline.txt"
    _one_usage_line(
        merge(*shards, "--out", out, "--update-baseline", inside), "one of the merge's own inputs"
    )
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    _one_usage_line(merge(*shards, "--out", out, "--update-baseline", a_file / "b.txt"), "cannot be written")
    assert not out.exists() and not inside.exists()


def test_a_merged_runs_default_id_is_dated_like_every_runs(shards: list[Path], tmp_path: Path) -> None:
    import json

    done = merge(*shards, "--out", tmp_path / "nightly")
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = json.loads((tmp_path / "nightly" / "summary.json").read_text())["run_id"]
    assert run_id != "nightly" and run_started(run_id) is not None and "symbolic" in run_id


def test_a_merge_stopped_midway_leaves_nothing_at_out(
    shards: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop is a patched summary writer (a fake: a Ctrl-C right after the merged run wrote summary.json)."""
    from mathcomp_tests import summary_format

    written = summary_format.write

    def interrupted(*args: object) -> None:
        written(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(summary_format, "write", interrupted)
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    out = tmp_path / "merged"
    with pytest.raises(KeyboardInterrupt):
        merge_in_process(shards, out, GateOptions(), lambda _: None)
    assert not out.exists() and list(tmp_path.iterdir()) == []
