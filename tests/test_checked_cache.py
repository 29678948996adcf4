"""A dataset is verified and audited once per content: an unchanged file is read back, an edited one checked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from suite_runner import REPO

from mathcomp_tests.data import checked, datasets, scenarios
from mathcomp_tests.data.scenarios import DatasetError


def test_an_unchanged_file_is_not_verified_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "s.csv"
    shutil.copy(REPO / "fixtures" / "scenarios.csv", data)
    first = datasets.resolve(str(data), None, tmp_path / "cache")
    assert len(list((tmp_path / "cache" / "checked").glob("*.pickle"))) == 1

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
    label_at = first_row.index("equal") if "equal" in first_row else None
    assert label_at is not None, "the first fixture row is labelled equal"
    first_row[label_at] = "more"
    data.write_text(lines[0] + ",".join(first_row) + "".join(lines[2:]), encoding="utf-8")
    with pytest.raises(DatasetError, match="fail verification"):
        datasets.resolve(str(data), None, tmp_path / "cache")
    rows, _ = checked.load(data, tmp_path / "cache")
    assert rows[0].kind == "label"
