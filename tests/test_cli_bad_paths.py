"""`mathcomp report` and `mathcomp init` given a path that cannot be what they need: one usage line, exit 2
(cli/command.py), and init writes nothing at all rather than half its files."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.usage import call


def usage_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_report_on_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "summary.json"
    file.write_text("{}")
    line = usage_line(*call(capsys, "report", str(file))[::2])
    assert f"{file}: a file, not a run folder; expected a folder such as reports/latest" in line


def test_init_with_workflows_a_file_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "workflows").write_text("not a folder")
    line = usage_line(*call(capsys, "init", str(tmp_path))[::2])
    assert f"{tmp_path / '.github' / 'workflows'}: a file where" in line and "nothing written" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".github", "workflows"]


def test_init_on_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "pyproject.toml"
    file.write_text("")
    line = usage_line(*call(capsys, "init", str(file))[::2])
    assert f"{file}: a file, not a folder; expected the repository's folder" in line
    assert "Errno" not in line


def test_init_under_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "repo"
    file.write_text("")
    line = usage_line(*call(capsys, "init", str(file / "sub"))[::2])
    assert f"{file}: a file where {file / 'sub'} needs a folder" in line


def test_init_with_a_folder_where_a_starter_file_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "thresholds.toml").mkdir()
    line = usage_line(*call(capsys, "init", str(tmp_path), "--force")[::2])
    assert f"{tmp_path / 'thresholds.toml'}: a folder where the starter file goes" in line
    assert [p.name for p in tmp_path.iterdir()] == ["thresholds.toml"]
