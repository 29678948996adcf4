"""summary.json has one owner and a version: the suite writes version 2 with exactly the keys
docs/results.md documents; every reader reads an older unversioned run folder as it is, refuses a newer
version in one line naming the file, and decides whether a run is complete the same way (a summary that gives
reasons is incomplete, whether or not it says `status`); `mathcomp record --stand-in` writes the stand-in of a
run that wrote no summary.json through the same owner."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.baseline_file import reader as baseline_reader
from mathcomp_tests.baseline_file.format import BaselineError
from mathcomp_tests.cli import main
from mathcomp_tests.history import groups as history_groups
from mathcomp_tests.records import answer_sets
from mathcomp_tests.report.headline import verdict_html
from mathcomp_tests.report.standalone import DamagedRunError, load_summary
from mathcomp_tests.scoring.metrics import percent
from mathcomp_tests.verdict import chance, job_summary, of_run

FORMAT_1 = Path(__file__).parent / "run_folders" / "20261126-173506-symbolic-dfbc"
"""A run folder as the suite wrote it before summary.json had a version (paths made relative)."""
SCHEMA = REPO / "docs" / "results.md"
"""Its section "summary.json, key by key" is the schema."""
REASON = "the job ended before the suite wrote summary.json (cancelled, killed or out of memory)"


def _documented(section: str) -> list[str]:
    """The keys of the table under ``### <section>`` in docs/results.md, in order."""
    text = SCHEMA.read_text(encoding="utf-8").split(f"\n### {section}\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", text, re.M)


def _folder(tmp_path: Path, summary: dict[str, Any], name: str = "20261201-031700-night-aa01") -> Path:
    """A run folder holding ``summary`` and the results.jsonl of the format-1 run."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    shutil.copy(FORMAT_1 / "results.jsonl", folder / "results.jsonl")
    return folder


def _format_1() -> dict[str, Any]:
    return dict(json.loads((FORMAT_1 / "summary.json").read_text(encoding="utf-8")))


def _history(folder: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["history", str(folder.parent), "-o", str(folder.parent / "history.html")])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _verdict_line(summary: dict[str, Any]) -> bool:
    verdict = of_run.verdict(summary)
    return verdict.line.startswith("INCOMPLETE") and not verdict.passed


def _baseline_refuses(folder: Path) -> bool:
    try:
        baseline_reader.from_run_dir(folder)
    except BaselineError as exc:
        return "an incomplete run" in str(exc)
    return False


READERS: dict[str, Callable[[dict[str, Any], Path, Any], bool]] = {
    "the verdict line": lambda s, d, c: _verdict_line(s),
    "the report's verdict": lambda s, d, c: "INCOMPLETE: this run cannot pass" in verdict_html(s),
    "the job summary": lambda s, d, c: job_summary.markdown(s).startswith("## MathComp: INCOMPLETE"),
    "history's placement": lambda s, d, c: history_groups.status(s)[0] is False,
    "mathcomp history": lambda s, d, c: "INCOMPLETE" in _history(d, c),
    "a run folder as a baseline": lambda s, d, c: _baseline_refuses(d),
}  # fmt: skip


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(
    "spelled",
    [
        {"incomplete_reasons": [REASON]},  # reasons, and no `status`
        {"status": "incomplete", "incomplete_reasons": [REASON]},
        {"status": "incomplete"},  # `status`, and no reasons
    ],
    ids=["reasons-only", "both", "status-only"],
)
def test_every_reader_sees_an_incomplete_summary_as_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reader: str, spelled: dict[str, Any]
) -> None:
    summary = {k: v for k, v in _format_1().items() if k not in ("status", "incomplete_reasons")} | spelled
    folder = _folder(tmp_path / "reports", summary)
    assert READERS[reader](summary, folder, capsys), f"{reader} took an incomplete run for a complete one"


def test_a_complete_summary_is_complete_to_every_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = _format_1()
    folder = _folder(tmp_path / "reports", summary)
    assert not any(read(summary, folder, capsys) for read in READERS.values())


def test_a_run_folder_from_before_versions_is_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "version" not in _format_1()
    assert load_summary(FORMAT_1)["run_id"] == "20261126-173506-symbolic-dfbc"
    assert set(answer_sets.from_run_folder(FORMAT_1).answers) == {
        "neutral-begin-std-one-word",
        "neutral-end-std-one-word",
    }
    assert len(baseline_reader.from_run_dir(FORMAT_1).cases) == 2
    page = tmp_path / "page.html"
    assert main(["report", str(FORMAT_1), "-o", str(page)]) == 0 and "PASSED: all 2 cases" in page.read_text()
    reports = tmp_path / "reports"
    shutil.copytree(FORMAT_1, reports / FORMAT_1.name)
    assert "20261126-173506-symbolic-dfbc" in _history(reports / FORMAT_1.name, capsys)


def _refusals(folder: Path) -> dict[str, str]:
    """What each reader says of the folder (its one error line)."""
    said: dict[str, str] = {}
    for name, read, error in (
        ("load_summary", load_summary, DamagedRunError),
        ("answer set", answer_sets.from_run_folder, answer_sets.DamagedError),
        ("baseline", baseline_reader.from_run_dir, BaselineError),
    ):
        with pytest.raises(error) as caught:
            read(folder)
        said[name] = str(caught.value)
    return said


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        (99, "version 99, newer than this mathcomp-tests reads (versions 1 to 2); upgrade mathcomp-tests"),
        ("2", 'version "2"; expected a whole number from 1 to 2'),
        (0, "version 0; expected a whole number from 1 to 2"),
    ],
)
def test_a_version_it_cannot_read_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], found: object, expected: str
) -> None:
    folder = _folder(tmp_path / "reports", _format_1() | {"version": found})
    for reader, line in _refusals(folder).items():
        assert str(folder / "summary.json") in line and expected in line, f"{reader}: {line}"
        assert "\n" not in line
    assert main(["report", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and str(folder / "summary.json") in err
    assert main(["history", str(folder.parent)]) == 1
    assert expected in capsys.readouterr().err


def test_the_suite_writes_version_2_with_every_documented_key(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--framings=neutral", "--positions=begin", "--limit=2")
    assert run.returncode == 0, run.output
    written = json.loads((run.run_dir / "summary.json").read_text())
    assert written["version"] == 2
    assert list(written) == _documented("Keys"), "docs/results.md lists every key, in the order written"
    assert written["status"] == "complete" and written["batch"] is None
    assert written["at_chance"] == [], "the symbolic reference answers every item right"


def test_the_demo_models_cases_at_chance_are_named_in_summary_json_the_report_and_the_job_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demonstration model answers its neutral cases no better than always answering 'less'."""
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    run = run_suite(tmp_path, "--framings=neutral", "--limit=20")
    assert run.returncode in (0, 1) and "Traceback" not in run.output, run.output
    found = run.summary["at_chance"]
    assert [e["case"] for e in found] == ["neutral-begin-std-one-word", "neutral-end-std-one-word"]
    page = (run.run_dir / "report.html").read_text()
    start = page.index('<div class="mathcomp-unseen">')
    assert page.index('<div class="mathcomp-verdict') < start < page.index('<div class="mathcomp-run">')
    section = page[start : page.index("</div>", start)]
    said = step_summary.read_text()
    for entry in found:
        assert set(entry) == {"case", "accuracy", "constant", "label"}
        assert entry["accuracy"] <= entry["constant"] and entry["label"] in ("less", "more", "equal")
        assert chance.note(entry) in run.output, "the terminal says the same"
        row = f"<td>{entry['case']}</td><td>{percent(entry['accuracy'])}</td><td>{entry['label']}</td>"
        assert row in section, "the report names it under the verdict"
        assert f"- {entry['case']}: {chance.short_text(entry)}" in said.splitlines(), "so does the job summary"


def _stand_in(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    records = tmp_path / "night-record"
    code = main(["record", str(records), "--stand-in", "--model=openai/tiny", *extra])
    return code, records


def test_record_stand_in_writes_an_incomplete_record_every_reader_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, records = _stand_in(tmp_path)
    assert code == 0
    (folder,) = records.iterdir()
    assert re.fullmatch(r"\d{8}-\d{6}-openai-tiny-[0-9a-f]{4}", folder.name), folder.name
    assert capsys.readouterr().out == f"wrote {folder / 'summary.json'}\n"
    assert [p.name for p in folder.iterdir()] == ["summary.json"], "written whole: no temporary file left"
    record = load_summary(folder)
    assert list(record) == _documented("A stand-in's keys")
    assert set(record) <= set(_documented("Keys"))
    assert (record["version"], record["run_id"], record["model"]) == (2, folder.name, "openai/tiny")
    assert (record["status"], record["incomplete_reasons"]) == ("incomplete", [REASON])
    verdict = of_run.verdict(record)
    assert not verdict.passed and verdict.line.startswith(f"INCOMPLETE ({REASON})")
    shown = _history(folder, capsys)
    assert folder.name in shown and f"INCOMPLETE: {REASON}" in shown


def test_record_stand_in_says_its_own_reason(tmp_path: Path) -> None:
    code, records = _stand_in(tmp_path, "--reason=the runner lost its GPU")
    assert code == 0
    (folder,) = records.iterdir()
    assert load_summary(folder)["incomplete_reasons"] == ["the runner lost its GPU"]


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        ((), 2, "expected --from RUN_DIR (a finished run) or --stand-in"),
        (("--stand-in", "--model="), 2, "--model: expected the model the run tested, got nothing"),
    ],
)
def test_record_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], code: int, said: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["record", str(tmp_path / "records"), *args])
    err = capsys.readouterr().err
    assert exited.value.code == code and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "records").exists()


def test_record_into_a_file_fails_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "night-record").write_text("not a folder")
    code, records = _stand_in(tmp_path)
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"error: cannot write a record in {records}: ") and err.count("\n") == 1
    assert records.read_text() == "not a folder"
