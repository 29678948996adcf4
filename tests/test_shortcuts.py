"""The shortcut report: what a reader that skips steps scores, and the bounds our data keeps."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from mathcomp_tests.cli import main
from mathcomp_tests.data import shortcuts
from mathcomp_tests.data.scenarios import load, read
from mathcomp_tests.types import Label, Scenario

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios.csv"


def row(text_a: str, text_b: str, expr_a: str, expr_b: str, label: Label) -> Scenario:
    from mathcomp_tests.data.equations import evaluate

    return Scenario("x", text_a, text_b, expr_a, expr_b, evaluate(expr_a), evaluate(expr_b), label,
                    "Dining", "money", "lunch", True)  # fmt: skip


def test_the_bundled_scenarios_keep_every_bound() -> None:
    figures = shortcuts.measure(load(FIXTURES))
    assert shortcuts.breaches(figures) == []
    assert figures.naive_accuracy <= shortcuts.ORIGINAL.naive_accuracy
    assert figures.largest_accuracy <= shortcuts.ORIGINAL.largest_accuracy
    assert figures.operators_median >= shortcuts.ORIGINAL.operators_median


def test_the_naive_reader_and_the_largest_number_rule_on_rows_worked_by_hand() -> None:
    rows = [
        # naive sums 10 vs 9 -> less, true 10 vs 9+9 -> more; largest 8 vs 9 -> more (right)
        row("[PERSON_A] paid $2 and $8.", "[PERSON_B] paid $9 and twice that.", "2 + 8", "9 + (2×9)", "more"),
        # naive 7 vs 7 -> equal, true equal
        row("[PERSON_A] paid $3 and $4.", "[PERSON_B] paid $5 and $2.", "3 + 4", "5 + 2", "equal"),
    ]
    f = shortcuts.measure(rows)
    assert f.naive_accuracy == 0.5
    assert f.naive_dir_err == {"less": 0.5, "more": 0.0, "equal": 0.0}
    assert f.largest_accuracy == 0.5 and f.largest_agreement == 1.0
    assert f.derived == {"less": (0, 0), "more": (0, 1), "equal": (0, 0)}
    assert f.that == (0, 1)
    assert (f.operators_median, f.operators_max) == (1.0, 2)  # operators 1, 2, 1, 1


def test_a_set_with_derived_steps_on_one_side_leaves_the_bounds() -> None:
    """Move every derived step to A (swap sides, flip the label): the drift the issue describes."""
    flip: dict[Label, Label] = {"more": "less", "less": "more", "equal": "equal"}
    skewed = []
    for s in load(FIXTURES):
        if shortcuts.derived(s.expr_b) and not shortcuts.derived(s.expr_a):
            s = dataclasses.replace(
                s, text_a=s.text_b.replace("[PERSON_B]", "[PERSON_A]"),
                text_b=s.text_a.replace("[PERSON_A]", "[PERSON_B]"),
                expr_a=s.expr_b, expr_b=s.expr_a, total_a=s.total_b, total_b=s.total_a, label=flip[s.label],
            )  # fmt: skip
        skewed.append(s)
    problems = shortcuts.breaches(shortcuts.measure(skewed))
    assert any(p.startswith("derived steps in") for p in problems), problems


def test_the_audit_prints_the_shortcut_report_beside_the_originals_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["audit", str(FIXTURES)]) == 0
    out = capsys.readouterr().out
    assert "naive-sum reader: accuracy" in out and "(original 0.533)" in out
    assert "largest-number rule: accuracy" in out and "(original 0.437)" in out
    assert "derived steps in more rows, A/B:" in out
    assert "balance bounds: kept" in out


def test_the_originals_figures_are_what_its_file_gives() -> None:
    original = os.environ.get("MATHCOMP_ORIGINAL")
    if not original:
        pytest.skip("set MATHCOMP_ORIGINAL to the original MathComp_Dataset.csv")
    rows = [r.scenario for r in read(original) if r.scenario is not None]
    assert shortcuts.measure(rows) == shortcuts.ORIGINAL
