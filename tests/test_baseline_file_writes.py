"""The baseline is the user's file: written through a link to the file it points to, with that file's
permission bits (a new file: the user's umask), and updated case by case by a narrowed run, every other byte
kept; a file of another kind is refused as it is."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file import update as baseline_update
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.baseline_file.format import BaselineError


def _baseline(folder: Path, cases: dict[str, dict[str, str]] | None = None) -> Baseline:
    return Baseline(
        source=folder / "baseline.txt",
        model="symbolic",
        revision="1",
        dataset="fixtures/scenarios.csv",
        dataset_sha256="ab" * 32,
        prompt_set="hf",
        scenarios=("1", "2", "3"),
        cases=cases
        or {"a": {"1": "less", "2": "more", "3": "equal"}, "b": {"1": "less", "2": "less", "3": "less"}},
    )


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writing_through_a_link_replaces_the_target_and_keeps_its_mode(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "baseline.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "baseline.txt"
    link.symlink_to(os.path.relpath(target, tmp_path))
    written = writer.write(_baseline(tmp_path), link)
    assert link.is_symlink() and written == target.resolve()
    assert "case a: lme" in target.read_text()
    assert _mode(target) == 0o640
    assert sorted(p.name for p in shared.iterdir()) == ["baseline.txt"]  # no temporary file left


def test_a_new_baseline_file_gets_the_users_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        written = writer.write(_baseline(tmp_path), tmp_path / "new" / "baseline.txt")
    finally:
        os.umask(old)
    assert _mode(written) == 0o640  # 0666 less 0027, as any plain open() would make it


def test_a_narrowed_update_rewrites_its_cases_adds_new_ones_and_keeps_every_other_byte(
    tmp_path: Path,
) -> None:
    path = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    text = path.read_text().replace("case b:", "# the team's note\ncase b:")
    path.write_text(text)
    fresh = _baseline(
        tmp_path,
        {"a": {"1": "more", "2": "more", "3": "more"}, "c": {"1": "equal", "2": "error", "3": "error"}},
    )
    done = baseline_update.update(path, fresh)
    assert (done.rewritten, done.added, done.kept, done.total) == (1, 1, 1, 3)
    expected = text.replace("case a: lme", "case a: mmm").replace("cases: 2", "cases: 3") + "case c: exx\n"
    assert path.read_text() == expected
    assert set(reader.load(path).cases) == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": "openai/other"}, r"holds another model \(the file's symbolic, the run's openai/other\)"),
        ({"revision": "2"}, r"another revision of the model \(the file's 1, the run's 2\)"),
        ({"scenarios": ("1", "2")}, r"other scenarios \(3 in the file, 2 in the run"),
        ({"prompt_set": "paper"}, r"another prompt set"),
    ],
)
def test_a_narrowed_update_of_another_kind_is_refused_and_leaves_the_file(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    before = path.read_bytes()
    fresh = replace(_baseline(tmp_path), **change)  # type: ignore[arg-type]
    if "scenarios" in change:
        fresh = replace(fresh, cases={"a": {"1": "less", "2": "less"}})
    with pytest.raises(BaselineError, match=message):
        baseline_update.update(path, fresh)
    assert path.read_bytes() == before


def test_a_damaged_file_is_not_updated(tmp_path: Path) -> None:
    path = writer.write(_baseline(tmp_path), tmp_path / "baseline.txt")
    path.write_text(path.read_text().replace("cases: 2", "cases: 5"))
    before = path.read_bytes()
    with pytest.raises(BaselineError, match="damaged or cut short"):
        baseline_update.update(path, _baseline(tmp_path))
    assert path.read_bytes() == before
