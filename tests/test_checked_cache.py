"""A dataset is verified and audited once per content: an unchanged file is read back, an edited one checked.

The cache is plain data: whatever lies in the cache folder (a planted pickle, a truncated or foreign file)
is read as data or ignored, never executed, and the dataset is verified again.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from helpers.suite_runner import REPO

from mathcomp_tests.data import checked, datasets, scenarios
from mathcomp_tests.data.scenarios import DatasetError


def test_an_unchanged_file_is_not_verified_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "s.csv"
    shutil.copy(REPO / "fixtures" / "scenarios.csv", data)
    first = datasets.resolve(str(data), None, tmp_path / "cache")
    assert len(list((tmp_path / "cache" / "checked").glob("*.json"))) == 1

    def never(path: object) -> object:
        raise AssertionError("an unchanged file was verified again")

    monkeypatch.setattr(scenarios, "read", never)
    again = datasets.resolve(str(data), None, tmp_path / "cache")
    assert again.scenarios == first.scenarios and again.notes == first.notes


def test_an_edited_file_is_verified_again(tmp_path: Path) -> None:
    data = tmp_path / "s.csv"
    shutil.copy(REPO / "fixtures" / "scenarios.csv", data)
    datasets.resolve(str(data), None, tmp_path / "cache")
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    first_row = lines[1].split(",")
    label_at = next(i for i, v in enumerate(first_row) if v in ("less", "more", "equal"))
    first_row[label_at] = "less" if first_row[label_at] != "less" else "more"
    data.write_text(lines[0] + ",".join(first_row) + "".join(lines[2:]), encoding="utf-8")
    with pytest.raises(DatasetError, match="fail verification"):
        datasets.resolve(str(data), None, tmp_path / "cache")
    rows, _ = checked.load(data, tmp_path / "cache")
    assert rows[0].kind == "label"


FLAWED = (
    '301,"[PERSON_A] spent $7 on lunch, $8 on dinner, and got a $6 refund for breakfast.",'
    '"[PERSON_B] paid $5 for breakfast, $9 for lunch, and $1 for snacks.",Dining,money,equal,7+8,5+9+1,'
    "buying food,FALSE\n"
    "302,[PERSON_A] ran 3 miles.,[PERSON_B] ran 4 miles.,Health & Fitness,distance,less,3,4,running,FALSE\n"
    "303,Someone ran 3 miles.,[PERSON_B] ran 4 miles.,Health & Fitness,distance,more,3,4,running,FALSE\n"
)
"""A literal-reading finding, a wrong label and a row that cannot be scored: every shape a row is stored in."""


def _cached_once(tmp_path: Path) -> tuple[Path, Path, checked.Checked]:
    """The bundled scenarios and FLAWED, checked once: the file, its one cache entry, and what was loaded."""
    data = tmp_path / "s.csv"
    shutil.copy(REPO / "fixtures" / "scenarios.csv", data)
    with open(data, "a", encoding="utf-8") as fh:
        fh.write(FLAWED)
    loaded = checked.load(data, tmp_path / "cache")
    assert [(r.kind, bool(f)) for r, f in zip(*loaded, strict=True)][-3:] == [
        (None, True),
        ("label", True),
        ("row", True),
    ]
    [entry] = [p for p in (tmp_path / "cache" / "checked").iterdir() if not p.name.endswith(".part")]
    return data, entry, loaded


class _Planted:
    """A pickle that, when unpickled, creates ``marker`` and stands in for an empty dataset."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        code = f"(__import__('pathlib').Path({str(self.marker)!r}).touch(), ([], []))[1]"
        return eval, (code,)


def test_the_original_reads_back_from_its_cache_entry_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = os.environ.get("MATHCOMP_ORIGINAL")
    if not original:
        pytest.skip("set MATHCOMP_ORIGINAL to the original MathComp_Dataset.csv")
    rows, findings = checked.load(Path(original), tmp_path / "cache")
    assert len(rows) == 300 and sum(map(len, findings)) == 21

    def never(path: object) -> object:
        raise AssertionError("an unchanged file was verified again")

    monkeypatch.setattr(scenarios, "read", never)
    assert checked.load(Path(original), tmp_path / "cache") == (rows, findings)


def test_a_planted_pickle_is_never_executed(tmp_path: Path) -> None:
    """The payload goes where this code's own entry was (for the pickle cache, the exact path it read back)
    and beside it under both suffixes."""
    data, entry, loaded = _cached_once(tmp_path)
    marker = tmp_path / "executed"
    payload = pickle.dumps(_Planted(marker))
    for name in {entry.name, f"{entry.stem}.pickle", f"{entry.stem}.json"}:
        (entry.parent / name).write_bytes(payload)
    again = checked.load(data, tmp_path / "cache")
    assert not marker.exists(), "the cache folder's content was executed"
    assert again == loaded and len(again[0]) == 303


def _truncated(text: str) -> str:
    return text[: len(text) // 2]


def _another_version(text: str) -> str:
    return json.dumps({**json.loads(text), "version": -1})


def _total_as_a_list(text: str) -> str:
    stored = json.loads(text)
    stored["rows"][0]["scenario"]["total_a"] = [1, 2]
    return json.dumps(stored)


def _line_as_text(text: str) -> str:
    stored = json.loads(text)
    stored["rows"][5]["line"] = "7"
    return json.dumps(stored)


def _unknown_label(text: str) -> str:
    stored = json.loads(text)
    stored["rows"][0]["scenario"]["label"] = "bigger"
    return json.dumps(stored)


def _a_row_that_is_text(text: str) -> str:
    stored = json.loads(text)
    stored["rows"][3] = "row"
    return json.dumps(stored)


def _a_finding_with_an_extra_key(text: str) -> str:
    stored = json.loads(text)
    with_findings = next(r for r in stored["rows"] if r["findings"])
    with_findings["findings"][0]["__class__"] = "os.system"
    return json.dumps(stored)


def _another_files_rows(text: str) -> str:
    return json.dumps({**json.loads(text), "sha256": "0" * 64})


DAMAGE = {
    "truncated": _truncated,
    "garbage": lambda text: "\x00\xff not json at all",
    "empty": lambda text: "",
    "a list": lambda text: "[1, 2, 3]",
    "deeply nested": lambda text: "[" * 100_000 + "]" * 100_000,
    "another version": _another_version,
    "a total that is not a number": _total_as_a_list,
    "a line that is text": _line_as_text,
    "an unknown label": _unknown_label,
    "a row that is text": _a_row_that_is_text,
    "a finding with an extra key": _a_finding_with_an_extra_key,
    "another file's rows": _another_files_rows,
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_or_foreign_cache_file_is_ignored_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    data, entry, loaded = _cached_once(tmp_path)
    entry.write_text(DAMAGE[damage](entry.read_text(encoding="utf-8")), encoding="utf-8")
    assert checked.load(data, tmp_path / "cache") == loaded

    def never(path: object) -> object:
        raise AssertionError("the rebuilt cache entry was not used")

    monkeypatch.setattr(scenarios, "read", never)
    assert checked.load(data, tmp_path / "cache") == loaded


def test_a_cache_entry_that_cannot_be_written_is_skipped(tmp_path: Path) -> None:
    data, entry, loaded = _cached_once(tmp_path)
    entry.unlink()
    entry.mkdir()
    assert checked.load(data, tmp_path / "cache") == loaded
    assert entry.is_dir()
