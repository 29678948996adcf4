"""A damaged shard folder is one usage line naming the file and the field, before anything is written: a
shard.json whose shard index is "x", whose shard is null or a list, whose selection is a string or which
lacks a key, and a results.jsonl with a line that is not JSON or a record without its scenario (each was an
INTERNALERROR-style traceback, or a KeyError, before)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.merge_cli import finished_shards, merge

pytestmark = pytest.mark.xdist_group("merge")


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return finished_shards(tmp_path_factory.mktemp("merge-damaged"))


def _manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], str]:
    def damage(folder: Path) -> str:
        path = folder / "shard.json"
        manifest = json.loads(path.read_text())
        change(manifest)
        path.write_text(json.dumps(manifest))
        return str(path)

    return damage


def _results(change: Callable[[list[str]], None]) -> Callable[[Path], str]:
    def damage(folder: Path) -> str:
        path = folder / "results.jsonl"
        lines = path.read_text().splitlines()
        change(lines)
        path.write_text("\n".join(lines) + "\n")
        return str(path)

    return damage


def _drop_scenario(lines: list[str]) -> None:
    record = json.loads(lines[0])
    del record["scenario"]
    lines[0] = json.dumps(record)


DAMAGE: dict[str, tuple[Callable[[Path], str], str]] = {
    "index x": (_manifest(lambda m: m["shard"].update(index="x")), 'shard.index is "x"'),
    "shard null": (_manifest(lambda m: m.update(shard=None)), "shard is null; expected an object"),
    "shard a list": (_manifest(lambda m: m.update(shard=[1, 2])), "shard is [1, 2]; expected an object"),
    "selection a string": (_manifest(lambda m: m.update(selection="all")), 'selection is "all"'),
    "a key missing": (_manifest(lambda m: m.pop("fingerprint")), "expected the shard.json a shard writes"),
    "another version": (_manifest(lambda m: m.update(version=99)), "version is 99; this mathcomp-tests reads"),
    "a line not JSON": (_results(lambda lines: lines.insert(1, "{not json")), "line 2 is not a JSON record"),
    "no scenario": (_results(_drop_scenario), "record 1 has no 'scenario'"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_shard_is_one_line_naming_the_file_and_the_field(
    shards: list[Path], tmp_path: Path, damage: str
) -> None:
    broken = tmp_path / "shard-2"
    shutil.copytree(shards[1], broken)
    change, says = DAMAGE[damage]
    named = change(broken)
    out = tmp_path / "merged"
    done = merge(shards[0], broken, "--out", out)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0] and says in lines[0], done.stderr
    assert not out.exists()
