"""The audit: every row verified, every equation read against its sentence, the data against the paper."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from mathcomp_tests.cli import main
from mathcomp_tests.data.audit import Finding, audit
from mathcomp_tests.data.scenarios import COLUMNS, read

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "scenarios.csv"

BASE = {
    "ID": "1",
    "category": "Dining",
    "studied_quantity": "money",
    "task": "buying food",
    "natural_language_coefficient": "FALSE",
}


def row(id: str, a: str, eq_a: str, b: str, eq_b: str, label: str, **extra: str) -> dict[str, str]:
    return {
        **BASE,
        "ID": id,
        "sentence1": a,
        "equation_sentence1": eq_a,
        "sentence2": b,
        "equation_sentence2": eq_b,
        "result_comparison": label,
        **extra,
    }


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def findings_for(tmp_path: Path, *rows: dict[str, str]) -> list[Finding]:
    return audit(read(write_csv(tmp_path / "rows.csv", list(rows))))


def test_our_own_scenarios_come_out_clean_and_match_the_papers_tables(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert audit(read(FIXTURES)) == []
    assert main(["audit", str(FIXTURES)]) == 0
    out = capsys.readouterr().out
    assert "300 rows, 0 fail verification, 0 finding(s)" in out
    tables = [line for line in out.splitlines() if line.startswith("  Table")]
    assert len(tables) == 4
    assert all("(matches)" in line for line in tables)
    assert "Health & Fitness 40/40" in out and "money 137/137" in out and "less 119/119" in out
    assert "TRUE (verbal expressions) 142/142" in out


def test_a_refund_the_equation_leaves_out_is_flagged_with_the_label_a_literal_reading_gives(
    tmp_path: Path,
) -> None:
    refund = row(
        "6",
        "[PERSON_A] spent $7 on lunch, $8 on dinner, and got a $6 refund for breakfast.",
        "7+8",
        "[PERSON_B] paid $5 for breakfast, $9 for lunch, and $1 for snacks.",
        "5+9+1",
        "equal",
    )
    [finding] = findings_for(tmp_path, refund)
    assert (finding.id, finding.kind, finding.literal, finding.stored) == (
        "6",
        "omitted-deduction",
        "more",
        "equal",
    )
    assert not finding.verification
    line = str(finding)
    assert line.startswith("ID 6 (line 2) [omitted-deduction] equation_sentence1 '7+8' leaves out 6")
    assert "'got a $6 refund for breakfast.'" in line
    assert line.endswith("read literally, A totals 9, B 15 -> literal reading: more (labelled equal)")


def test_a_break_left_out_is_counted_in_the_unit_the_equation_uses(tmp_path: Path) -> None:
    study = row(
        "7",
        "[PERSON_A] spent 1.5 hours on homework, took a 20-minute break, then studied for another 40 minutes.",
        "(1.5×60) + 40",
        "[PERSON_B] attended a 2-hour study group and did 10 minutes of review before bed.",
        "(2×60) + 10",
        "equal",
        studied_quantity="time",
    )
    [finding] = findings_for(tmp_path, study)
    assert (finding.kind, finding.literal) == ("omitted-quantity", "less")
    assert "leaves out 20 in 'took a 20-minute break'" in finding.message
    assert "A totals 150, B 130" in finding.message


def test_number_words_percentages_unit_factors_and_subtotals_count_as_stated(tmp_path: Path) -> None:
    rows = [
        row(
            "1",
            "[PERSON_A] paid $18 for a ticket, twice that for a tour, and a third of the ticket price for coffee.",
            "18 + (2×18) + (18/3)",
            "[PERSON_B] bought 3 shirts at $45 each, got 20% off the total, and paid $8 in shipping.",
            "(3 × 45) - (0.2 × 135) + 8",
            "more",
        ),
        row(
            "2",
            "[PERSON_A] watched a 2-hour movie and three episodes of 30 minutes each.",
            "120 + (3×30)",
            "[PERSON_B] watched a film for half an hour and a 1.5-hour documentary.",
            "30 + 90",
            "less",
            studied_quantity="time",
        ),
        row(
            "3",
            "[PERSON_A] filled 10 gallons at $3.50 per gallon and left a 15% tip on a $20 wash.",
            "35 + (20×1.15)",
            "[PERSON_B] paid $40 for gas, returned a $5 item for a refund, and spent $12 on snacks.",
            "40 - 5 + 12",
            "less",
        ),
    ]
    assert findings_for(tmp_path, *rows) == []


def test_a_number_the_sentence_never_states_is_read_as_the_number_it_left_unused(tmp_path: Path) -> None:
    typo = row(
        "10",
        "[PERSON_A] lifted 8 weights for 3 sets, skipped 6 repetitions, and added 4 extra lifts.",
        "(8×3)-6+4",
        "[PERSON_B] completed 9 exercises, took 3 breaks, and finished with 6 stretches.",
        "9-3+16",
        "equal",
        studied_quantity="others",
    )
    [finding] = findings_for(tmp_path, typo)
    assert (finding.kind, finding.literal) == ("unstated-number", "less")
    assert "'9-3+16' writes 16, which the sentence neither states nor implies (read as 6)" in finding.message


def test_a_rounded_third_is_named_with_its_exact_value(tmp_path: Path) -> None:
    chapters = row(
        "4",
        "[PERSON_A] read 6 chapters on Monday and 12 on Tuesday.",
        "6 + 12",
        "[PERSON_B] read 5 chapters on Monday, two-thirds of that on Tuesday, and twice Tuesday's on Friday.",
        "5 + (2/3 × 5) + (2 × 3.33)",
        "less",
        studied_quantity="others",
    )
    [finding] = findings_for(tmp_path, chapters)
    assert finding.kind == "rounded-number"
    assert "writes 3.33 for 10/3 (~3.333)" in finding.message
    assert "B 15" in finding.message and finding.literal == "less"


def test_rows_that_fail_verification_come_with_the_label_the_equations_give(tmp_path: Path) -> None:
    good = row("1", "[PERSON_A] paid $5 and $3.", "5 + 3", "[PERSON_B] paid $4 and $4.", "4 + 4", "equal")
    rows = [
        good,
        {**good, "ID": "2", "result_comparison": "more"},
        {**good, "ID": "3", "equation_sentence2": "4 + four"},
        {**good, "ID": "1"},
    ]
    found = findings_for(tmp_path, *rows)
    assert [(f.id, f.kind, f.literal) for f in found] == [
        ("2", "label", "equal"),
        ("3", "equation", None),
        ("1", "duplicate", "equal"),
    ]
    assert all(f.verification for f in found)
    assert str(found[0]).endswith(
        "so B is 'equal', but the row says 'more' -> literal reading: equal (labelled more)"
    )
    assert str(found[1]).endswith("-> literal reading: ? (labelled equal)")


def test_the_command_line_prints_one_line_per_finding_and_says_so_in_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = row("5", "[PERSON_A] paid $5 and $3.", "5 + 3", "[PERSON_B] paid $4 and $4.", "4 + 4", "less")
    assert main(["audit", str(write_csv(tmp_path / "bad.csv", [bad]))]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ID 5 (line 2) [label] label disagrees with the equations")
    assert out[1].endswith("1 rows, 1 fail verification, 1 finding(s) (label 1)")
    assert "  Table 4, label (differs: equal, less, more): equal 0/94, less 1/119, more 0/87" in out

    assert main(["audit", str(tmp_path / "missing.csv")]) == 2
    assert "cannot read the dataset" in capsys.readouterr().err


def test_python_dash_m_runs_the_audit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", "audit", str(FIXTURES)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "0 finding(s)" in done.stdout


def test_what_the_audit_finds_in_the_original_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    original = os.environ.get("MATHCOMP_ORIGINAL")
    if not original:
        pytest.skip("set MATHCOMP_ORIGINAL to the original MathComp_Dataset.csv")
    found = audit(read(original))
    assert Counter(f.kind for f in found) == {
        "label": 3,
        "unstated-number": 7,
        "rounded-number": 1,
        "omitted-deduction": 5,
        "omitted-quantity": 5,
    }
    assert {f.id for f in found if f.verification} == {"126", "129", "242"}
    flipped = {f.id for f in found if f.literal and f.literal != f.stored}
    assert flipped == {"10", "11", "24", "27", "29", "33", "41", "79", "126", "129", "133", "136", "242"}
    lines = [str(f) for f in found]
    assert any(
        line.startswith("ID 79 (line 80) [unstated-number]") and "writes 2006" in line for line in lines
    )
    assert any(
        line.startswith("ID 11 ") and "literal reading: equal (labelled less)" in line for line in lines
    )

    assert main(["audit", original]) == 1
    out = capsys.readouterr().out
    assert "300 rows, 3 fail verification, 21 finding(s)" in out
    assert sum("(matches)" in line for line in out.splitlines()) == 4
    assert "labels the equations give: less 117, more 90, equal 93" in out
