"""helpers/shared_build.py: the session's workers build a shared model once, and a failed build is tried again."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest
from helpers.shared_build import built_once

ASKERS = 2
"""Processes that ask for the build at once."""


def _build(folder: Path) -> Path:
    with open(folder.parent / "builds.log", "a") as log:
        log.write("built\n")
    _both_asked(folder.parent.parent / "asked.log")  # the other one is on its way to the lock
    folder.mkdir()
    (folder / "weights").write_text("w")
    return folder


def _both_asked(asked: Path) -> None:
    """Wait until every asker has said it asks (only in the two-asker test, which writes ``asked``)."""
    deadline = time.monotonic() + 60
    while asked.exists() and len(asked.read_text().splitlines()) < ASKERS:
        assert time.monotonic() < deadline, "the other asker never asked"  # hang guard
        time.sleep(0.01)


def _ask(shared: str, out: multiprocessing.Queue[str]) -> None:
    import os

    os.environ["MATHCOMP_TESTS_SHARED"] = shared
    with open(Path(shared) / "asked.log", "a") as asked:
        asked.write("asking\n")
    out.put(str(built_once("model", _build, Path(shared) / "unused")))


def test_two_workers_asking_at_once_get_one_build(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    workers = [context.Process(target=_ask, args=(str(tmp_path), out)) for _ in range(ASKERS)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    paths = {out.get(timeout=5), out.get(timeout=5)}
    assert paths == {str(tmp_path / "built" / "model")}
    assert (tmp_path / "built" / "builds.log").read_text() == "built\n"
    assert (tmp_path / "built" / "model" / "weights").read_text() == "w"


def test_a_failed_build_leaves_nothing_and_the_next_asker_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MATHCOMP_TESTS_SHARED", str(tmp_path))

    def broken(folder: Path) -> Path:
        folder.mkdir()
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError):
        built_once("model", broken, tmp_path / "unused")
    assert sorted(p.name for p in (tmp_path / "built").iterdir()) == ["model.lock"]
    assert built_once("model", _build, tmp_path / "unused") == tmp_path / "built" / "model"


def test_without_the_shared_folder_it_builds_where_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MATHCOMP_TESTS_SHARED", raising=False)
    assert built_once("model", _build, tmp_path / "here") == tmp_path / "here"


def test_in_place_the_build_is_made_where_it_is_handed_out_and_a_failed_one_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MATHCOMP_TESTS_SHARED", str(tmp_path))
    seen: list[Path] = []

    def build(folder: Path) -> Path:
        seen.append(folder)
        folder.mkdir()
        (folder / "summary.json").write_text(str(folder))  # a path written into the build stays true
        if len(seen) == 1:
            raise RuntimeError("the run was killed")
        return folder

    with pytest.raises(RuntimeError):
        built_once("runs", build, tmp_path / "unused", in_place=True)
    assert sorted(p.name for p in (tmp_path / "built").iterdir()) == ["runs.lock"]
    done = built_once("runs", build, tmp_path / "unused", in_place=True)
    assert done == seen[1] == tmp_path / "built" / "runs"
    assert (done / "summary.json").read_text() == str(done)
    assert built_once("runs", build, tmp_path / "unused", in_place=True) == done and len(seen) == 2
