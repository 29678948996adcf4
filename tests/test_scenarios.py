"""Loading a MathComp CSV: exact totals for good rows, and errors that name the file, the row and the fix."""

from __future__ import annotations

import csv
import os
from fractions import Fraction
from pathlib import Path

import pytest

from mathcomp_tests.data.scenarios import COLUMNS, DatasetError, load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

LIFTING = {
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
HAIRCUT = {
    **LIFTING,
    "ID": "2",
    "sentence1": "[PERSON_A] paid $7 for a haircut, tipped $2, and bought products for triple the tip.",
    "sentence2": "[PERSON_B] paid $5.50 for a haircut and tipped $0.50.",
    "category": "Personal Care",
    "studied_quantity": "money",
    "result_comparison": "less",
    "equation_sentence1": "7 + 2 + (3×2)",
    "equation_sentence2": "5.5 + 0.5",
    "task": "hair care",
    "natural_language_coefficient": "TRUE",
}
WALKING = {
    **LIFTING,
    "ID": "3",
    "result_comparison": "equal",
    "equation_sentence1": "4 + 2 + (4/2)",
    "equation_sentence2": "3 + 3 + 2",
    "studied_quantity": "distance",
}


def write_csv(path: Path, rows: list[dict[str, str]], columns: tuple[str, ...] = COLUMNS) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def load_error(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load(path)
    return str(info.value)


def test_a_valid_file_loads_with_exact_totals_and_labels(tmp_path: Path) -> None:
    scenarios = load(write_csv(tmp_path / "small.csv", [LIFTING, HAIRCUT, WALKING]))
    assert [s.id for s in scenarios] == ["1", "2", "3"]
    assert [(s.total_a, s.total_b, s.label) for s in scenarios] == [
        (Fraction(8), Fraction(10), "more"),
        (Fraction(15), Fraction(6), "less"),
        (Fraction(8), Fraction(8), "equal"),
    ]
    haircut = scenarios[1]
    assert haircut.text_a == HAIRCUT["sentence1"]
    assert haircut.expr_a == "7 + 2 + (3×2)"
    assert (haircut.category, haircut.quantity, haircut.task) == ("Personal Care", "money", "hair care")
    assert haircut.verbal is True
    assert scenarios[0].verbal is False


def test_a_missing_column_is_named_with_the_file(tmp_path: Path) -> None:
    columns = tuple(c for c in COLUMNS if c != "equation_sentence2")
    path = write_csv(tmp_path / "no_eq2.csv", [LIFTING], columns)
    message = load_error(path)
    assert str(path) in message
    assert "missing column(s) equation_sentence2;" in message


def test_a_bad_equation_names_the_file_and_row(tmp_path: Path) -> None:
    broken = {**HAIRCUT, "equation_sentence2": "5.5 dollars + 0.5"}
    path = write_csv(tmp_path / "bad_eq.csv", [LIFTING, broken])
    message = load_error(path)
    assert str(path) in message
    assert "row ID 2" in message
    assert "bad equation" in message
    assert "5.5 dollars + 0.5" in message
    assert "row ID 1" not in message


def test_a_wrong_label_shows_both_totals_and_both_labels(tmp_path: Path) -> None:
    wrong = {**HAIRCUT, "result_comparison": "equal"}
    path = write_csv(tmp_path / "wrong_label.csv", [LIFTING, wrong])
    message = load_error(path)
    assert str(path) in message
    assert "row ID 2" in message
    assert "A totals 15, B totals 6" in message
    assert "so B is 'less', but the row says 'equal'" in message


def test_every_bad_row_is_reported_at_once(tmp_path: Path) -> None:
    rows = [{**LIFTING, "result_comparison": "less"}, HAIRCUT, {**WALKING, "equation_sentence1": "x"}]
    message = load_error(write_csv(tmp_path / "two_bad.csv", rows))
    assert message.startswith("2 invalid row(s)")
    assert "row ID 1" in message and "row ID 3" in message


def test_an_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    message = load_error(path)
    assert str(path) in message
    assert "the file is empty" in message


def test_a_header_without_rows_is_refused(tmp_path: Path) -> None:
    message = load_error(write_csv(tmp_path / "header_only.csv", []))
    assert "no scenario rows" in message


def test_duplicate_ids_name_the_earlier_line(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "dupes.csv", [LIFTING, HAIRCUT, {**WALKING, "ID": "2"}])
    message = load_error(path)
    assert "row ID 2: ID 2 already used on line 3" in message


def test_a_coefficient_that_is_not_true_or_false_is_refused(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "coef.csv", [{**LIFTING, "natural_language_coefficient": "maybe"}])
    message = load_error(path)
    assert "row ID 1" in message
    assert "natural_language_coefficient is 'maybe'; expected TRUE or FALSE" in message


def test_a_missing_file_is_a_dataset_error(tmp_path: Path) -> None:
    message = load_error(tmp_path / "nowhere.csv")
    assert "cannot read the dataset" in message


def test_the_projects_scenarios_load_cleanly() -> None:
    scenarios = load(FIXTURES / "scenarios.csv")
    assert len(scenarios) >= 30
    assert len({s.id for s in scenarios}) == len(scenarios)


def test_the_original_dataset_has_exactly_three_mislabelled_rows() -> None:
    original = os.environ.get("MATHCOMP_ORIGINAL")
    if not original:
        pytest.skip("set MATHCOMP_ORIGINAL to the original MathComp_Dataset.csv")
    message = load_error(Path(original))
    assert message.startswith("3 invalid row(s)")
    reported = {line.split("row ID ")[1].split(":")[0] for line in message.splitlines() if "row ID" in line}
    assert reported == {"126", "129", "242"}
    assert all("label disagrees with the equations" in line for line in message.splitlines()[1:])
