"""A CSV that cannot be trusted is refused with one short error naming the file, the line and the column.

Each file here is written byte by byte the way a broken export or a hand edit produces it; the suite itself
is then run on some of them to show it stops with a usage error before any case.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from helpers.usage import refused

from mathcomp_tests.cli import main
from mathcomp_tests.data import audit, datasets
from mathcomp_tests.data.equations import MAX_LENGTH
from mathcomp_tests.data.scenarios import COLUMNS, MAX_FIELD, DatasetError, load, read

SHORT = 600
"""No message may be longer than this: a huge field is named, never echoed."""

ROW = {
    "ID": "1",
    "sentence1": "[PERSON_A] lifted 5 pounds with the left arm and 3 pounds with the right arm.",
    "sentence2": "[PERSON_B] lifted 4 pounds with each arm, then added 2 pounds.",
    "category": "Health & Fitness",
    "studied_quantity": "weight",
    "result_comparison": "more",
    "equation_sentence1": "5 + 3",
    "equation_sentence2": "4 + 4 + 2",
    "task": "lifting pounds",
    "natural_language_coefficient": "FALSE",
}
SECOND = {**ROW, "ID": "2", "result_comparison": "equal", "equation_sentence2": "4 + 4"}


def csv_text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def write(
    path: Path, *rows: dict[str, str], header: list[str] | None = None, extra: tuple[str, ...] = ()
) -> Path:
    """``rows`` under ``header`` (the ten MathComp columns by default); ``extra`` fields end the last row."""
    header = header or list(COLUMNS)
    lines = [header] + [[r[c] for c in header] for r in rows]
    lines[-1] += list(extra)
    path.write_text(csv_text(lines), encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load(path)
    message = str(info.value)
    assert str(path) in message and len(message) < SHORT, message
    return message


def test_a_column_named_twice_is_refused_with_the_line_and_both_columns(tmp_path: Path) -> None:
    header = [*COLUMNS, "result_comparison"]
    path = write(tmp_path / "twice.csv", {**ROW}, header=header)
    # The old reader kept the second result_comparison column; this one would have read "more" both times.
    message = error(path)
    assert "line 1" in message and "column 11" in message and "'result_comparison'" in message
    assert "column 6" in message and "once" in message


@pytest.mark.parametrize(
    ("column", "placeholder"), [("sentence1", "[PERSON_A]"), ("sentence2", "[PERSON_B]")]
)
def test_a_sentence_without_its_placeholder_is_refused_and_audited(
    tmp_path: Path, column: str, placeholder: str
) -> None:
    nameless = {**SECOND, column: ROW[column].replace(placeholder, "Someone")}
    path = write(tmp_path / "nameless.csv", ROW, nameless)
    message = error(path)
    assert "line 3" in message and column in message and placeholder in message
    assert "line 2" not in message

    findings = audit.audit(read(path))
    assert [(f.id, f.line, f.kind) for f in findings] == [("2", 3, "row")]
    assert column in findings[0].message and placeholder in findings[0].message

    with pytest.raises(DatasetError, match=rf"(?s)1 row\(s\) fail verification.*line 3.*{column}"):
        datasets.resolve(str(path), None, tmp_path / "cache")
    kept = datasets.resolve(str(path), "keep", tmp_path / "cache")
    assert [s.id for s in kept.scenarios] == ["1"] and [f.id for f in kept.excluded] == ["2"]


def test_the_audit_command_reports_a_missing_placeholder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "nameless.csv", {**ROW, "sentence2": "He lifted 4 pounds with each arm, then 2."})
    assert main(["audit", str(path)]) == 1
    out = capsys.readouterr().out
    assert "ID 1 (line 2) [row] sentence2" in out and "[PERSON_B]" in out


def test_a_placeholder_spelled_as_in_the_original_is_accepted(tmp_path: Path) -> None:
    spelled = {**ROW, "sentence1": ROW["sentence1"].replace("[PERSON_A]", "[Person_A]")}
    spelled["sentence2"] = ROW["sentence2"].replace("[PERSON_B]", "[person b]")
    assert [s.id for s in load(write(tmp_path / "spelled.csv", spelled))] == ["1"]


def test_a_placeholder_for_the_other_person_does_not_count(tmp_path: Path) -> None:
    swapped = {**ROW, "sentence2": ROW["sentence2"].replace("[PERSON_B]", "[PERSON_A]")}
    message = error(write(tmp_path / "swapped.csv", swapped))
    assert "sentence2" in message and "[PERSON_B]" in message


def test_extra_trailing_fields_are_refused_with_the_first_extra_column(tmp_path: Path) -> None:
    path = write(tmp_path / "extra.csv", ROW, SECOND, extra=("4", "oops"))
    message = error(path)
    assert "line 3" in message and "2 field(s)" in message and "column 11" in message
    assert "line 2" not in message


def test_an_unquoted_comma_in_a_sentence_is_caught_as_an_extra_field(tmp_path: Path) -> None:
    path = tmp_path / "unquoted.csv"
    good = csv_text([list(COLUMNS), [ROW[c] for c in COLUMNS]])
    fields = [SECOND[c] for c in COLUMNS]
    broken = ",".join(f.replace(",", " and") if i else f for i, f in enumerate(fields))
    broken = broken.replace("[PERSON_A] lifted 5 pounds", "[PERSON_A] lifted 5 pounds, easily,", 1)
    path.write_text(good + broken + "\n", encoding="utf-8")
    message = error(path)
    assert "line 3" in message and "column 11" in message


@pytest.mark.parametrize(
    ("where", "line", "column"),
    [
        ("header", 1, "column 2"),
        ("sentence", 3, "sentence2 (column 3)"),
        ("last field", 2, "natural_language_coefficient (column 10)"),
    ],
)
def test_a_nul_byte_anywhere_is_refused_with_its_line_and_column(
    tmp_path: Path, where: str, line: int, column: str
) -> None:
    path = write(tmp_path / "nul.csv", ROW, SECOND)
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if where == "header":
        text[0] = text[0].replace("sentence1", "sente\0nce1")
    elif where == "sentence":
        text[2] = text[2].replace("each arm", "each\0arm")
    else:
        text[1] = text[1].replace("FALSE", "FALSE\0")
    path.write_bytes("".join(text).encode("utf-8"))
    message = error(path)
    assert f"line {line}, {column}" in message and "NUL" in message


def test_a_ten_megabyte_field_is_one_short_error(tmp_path: Path) -> None:
    huge = {**SECOND, "sentence2": "[PERSON_B] " + "walked and " * (10 * 2**20 // 11)}
    message = error(write(tmp_path / "huge.csv", ROW, huge))
    assert "line 3" in message and f"at most {MAX_FIELD}" in message
    assert "walked and walked" not in message


def test_a_field_just_over_the_limit_names_its_column(tmp_path: Path) -> None:
    long = {**ROW, "task": "t" * (MAX_FIELD + 1)}
    message = error(write(tmp_path / "long.csv", long))
    assert f"line 2, task (column 9): {MAX_FIELD + 1} characters" in message
    assert f"at most {MAX_FIELD}" in message


def test_an_equation_of_twenty_thousand_terms_is_one_short_error(tmp_path: Path) -> None:
    huge = {**SECOND, "equation_sentence1": "+".join(["1"] * 20_000)}
    message = error(write(tmp_path / "terms.csv", ROW, huge))
    assert "line 3" in message and "equation_sentence1" in message and "at most" in message


def test_an_equation_longer_than_the_equation_limit_names_its_row_and_the_limit(tmp_path: Path) -> None:
    terms = MAX_LENGTH // 4 + 1
    long = {**SECOND, "equation_sentence2": " + ".join(["1"] * terms)}
    message = error(write(tmp_path / "long_eq.csv", ROW, long))
    assert "line 3" in message and "row ID 2" in message and "equation_sentence2" in message
    assert f"at most {MAX_LENGTH} characters" in message


def test_a_line_separator_inside_a_sentence_does_not_shift_line_numbers(tmp_path: Path) -> None:
    odd = {**ROW, "sentence1": ROW["sentence1"].replace("left arm", "left\u2028arm")}
    path = write(tmp_path / "separator.csv", odd, {**SECOND, "result_comparison": "less"})
    assert "line 3, row ID 2" in error(path)


BAD_FILES = {
    "column named twice": (
        lambda p: write(p, ROW, header=[*COLUMNS, "ID"]),
        "line 1, column 11: column 'ID' is named again",
    ),
    "missing placeholder": (
        lambda p: write(p, {**ROW, "sentence1": "Someone lifted 5 pounds."}),
        "line 2) [row] sentence1 has no [PERSON_A]",
    ),
    "ten-megabyte field": (
        lambda p: write(p, {**ROW, "task": "x" * (10 * 2**20)}),
        f"line 2: a field is longer than 131072 characters; expected at most {MAX_FIELD}",
    ),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_the_suite_stops_on_a_bad_dataset_with_one_usage_error(
    pytester: pytest.Pytester, tmp_path: Path, name: str
) -> None:
    make, expected = BAD_FILES[name]
    path = make(tmp_path / "bad.csv")
    run = refused(
        pytester, tmp_path, "--model=symbolic", f"--dataset={path}", "--limit=2", "--framings=neutral"
    )
    assert run.returncode == 4, run.output[-2000:]
    assert expected in run.output, run.output[-2000:]
    assert run.output.count("ERROR:") == 1 and "Traceback" not in run.output
    assert "passed" not in run.output and "failed" not in run.output
    assert len(run.output) < 2000


def test_a_header_after_a_blank_line_is_named_by_its_own_line(tmp_path: Path) -> None:
    path = write(tmp_path / "blank_first.csv", ROW, header=[*COLUMNS, "task"])
    path.write_text("\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert "line 2, column 11: column 'task' is named again" in error(path)
