"""Equations as MathComp writes them evaluate exactly, and anything that is not arithmetic is refused."""

from __future__ import annotations

from fractions import Fraction

import pytest

from mathcomp_tests.data.equations import MAX_LENGTH, EquationError, compare, evaluate, normalise, show


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("7 + 2 + (3×2)", Fraction(15)),
        ("3 x 2 + 1", Fraction(7)),
        ("3x2", Fraction(6)),
        ("2 X 3", Fraction(6)),
        ("5*12-2*12", Fraction(36)),
        ("2(3+1)", Fraction(8)),
        ("2 (3+1)", Fraction(8)),
        ("(1+1)(2+1)", Fraction(6)),
        ("20% * 50", Fraction(10)),
        ("50 × 10.5%", Fraction(21, 4)),
        ("$7 + $2", Fraction(9)),
        ("$1,200 + $300", Fraction(1500)),
        ("1,000,000 / 4", Fraction(250000)),
        ("4 + 2 + (4/2)", Fraction(8)),
        ("(12*3.5) + 2 - 6", Fraction(38)),
        ("30 ÷ 4", Fraction(15, 2)),
    ],
)
def test_dataset_spellings_evaluate_exactly(written: str, value: Fraction) -> None:
    result = evaluate(written)
    assert result == value
    assert isinstance(result, Fraction)


def test_decimals_are_exact_rationals_not_floats() -> None:
    assert evaluate("0.1 + 0.2") == Fraction(3, 10)
    assert evaluate("0.1 + 0.2") != Fraction(0.1 + 0.2)
    assert evaluate("1/3 + 1/3 + 1/3") == 1


def test_normalise_shows_the_python_arithmetic_it_evaluates() -> None:
    assert normalise("$1,200 × 2(3+1) + 20%") == "1200*2*(3+1) + (20/100)"


def test_a_trailing_result_that_agrees_is_accepted() -> None:
    assert evaluate("8 + 8/2 = 12") == 12


def test_a_trailing_result_that_disagrees_names_both_sides() -> None:
    with pytest.raises(EquationError, match=r"left side is 12, not 13"):
        evaluate("8 + 8/2 = 13")


@pytest.mark.parametrize(
    "written",
    [
        "",
        "   ",
        "abc",
        "5 apples + 3",
        "__import__('os').system('true')",
        "2^3",
        "1e3",
        "1,5",
        "= 5",
        "5 = 5 = 5",
        "3 +",
        "1/0",
    ],
)
def test_anything_that_is_not_plain_arithmetic_is_refused(written: str) -> None:
    with pytest.raises(EquationError):
        evaluate(written)


def test_the_refusal_quotes_what_was_written() -> None:
    with pytest.raises(EquationError, match=r"'5 apples \+ 3'"):
        evaluate("5 apples + 3")


def test_power_is_refused_like_any_other_non_dataset_operator() -> None:
    with pytest.raises(EquationError):
        evaluate("3**2")


@pytest.mark.parametrize(
    ("a", "b", "label"),
    [
        (Fraction(12), Fraction(15), "more"),
        (Fraction(15), Fraction(12), "less"),
        (Fraction(3, 10), evaluate("0.1 + 0.2"), "equal"),
    ],
)
def test_compare_labels_b_against_a(a: Fraction, b: Fraction, label: str) -> None:
    assert compare(a, b) == label


def test_show_prints_integers_plainly_and_fractions_with_a_decimal() -> None:
    assert show(Fraction(1160)) == "1160"
    assert show(Fraction(5705, 4)) == "5705/4 (~1426)"


@pytest.mark.parametrize("written", ["+".join(["1"] * 20_000), " + ".join(["(1)"] * 300), "1" * 5000])
def test_an_equation_too_long_to_be_data_is_refused_briefly(written: str) -> None:
    """20,000 terms used to end in a RecursionError: now the error states the size and the limit only."""
    with pytest.raises(EquationError) as info:
        evaluate(written)
    message = str(info.value)
    assert f"{len(written)} characters; expected at most {MAX_LENGTH}" in message
    assert len(message) < 200
