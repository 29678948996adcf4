"""The scenario generator: exact labels from the tree, the same rows for a seed, and balance at scale."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from helpers import warm_runs
from hypothesis import HealthCheck, given, settings

from mathcomp_tests.data import generate, generated_sets, numbers, shortcuts
from mathcomp_tests.data.audit import audit
from mathcomp_tests.data.equations import compare, evaluate
from mathcomp_tests.data.scenarios import read
from mathcomp_tests.types import LABELS, Scenario

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str) -> bytes:
    """`python -m mathcomp_tests generate ARGS`'s stdout, as bytes (forked from the warm parent where one runs)."""
    return subprocess.run(
        [warm_runs.python(), "-m", "mathcomp_tests", "generate", *args], cwd=REPO, capture_output=True, check=True
    ).stdout


def test_the_command_writes_the_dataset_schema_byte_identically_for_a_seed(tmp_path: Path) -> None:
    first, again, other = (
        cli("--n", "24", "--seed", "7"),
        cli("--n", "24", "--seed", "7"),
        cli("--n", "24", "--seed", "8"),
    )
    assert first == again
    assert first != other
    path = tmp_path / "out.csv"
    path.write_bytes(first)
    rows = read(path)
    assert len(rows) == 24 and all(r.kind is None for r in rows)
    assert Counter(r.values["result_comparison"] for r in rows) == {"less": 8, "more": 8, "equal": 8}


def test_the_bundled_300_are_what_the_generator_gives_for_the_shipped_seed() -> None:
    text = (REPO / "fixtures" / "scenarios.csv").read_text(encoding="utf-8")
    assert generate.to_csv(generated_sets.fixtures(generated_sets.FIXTURE_SEED)) == text


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow]
)
@given(generate.scenarios())
def test_every_strategy_scenario_is_exact_and_shaped_like_the_dataset(s: Scenario) -> None:
    assert compare(evaluate(s.expr_a), evaluate(s.expr_b)) == s.label
    assert s.text_a.startswith("[PERSON_A] ") and s.text_b.startswith("[PERSON_B] ")
    for text in (s.text_a, s.text_b):
        assert 2 <= len(numbers.stated(text)) <= 6, text


@pytest.mark.slow
def test_thousands_of_generated_rows_keep_the_bounds_the_audit_and_the_balance(tmp_path: Path) -> None:
    rows = list(generated_sets.balanced(1800, seed=11))
    figures = shortcuts.measure(rows)
    assert shortcuts.breaches(figures) == []
    assert figures.labels == {y: 600 for y in LABELS}
    path = tmp_path / "generated.csv"
    path.write_text(generate.to_csv(rows), encoding="utf-8")
    read_back = read(path)
    assert [r.kind for r in read_back] == [None] * 1800
    assert audit(read_back) == []
    quantities = Counter(s.quantity for s in rows)
    assert 0.40 < quantities["money"] / 1800 < 0.52  # the paper: 137 of 300
    assert 0.40 < sum(s.verbal for s in rows) / 1800 < 0.55  # the paper: 142 of 300


def test_a_short_decimal_is_written_exactly_whatever_its_sign() -> None:
    """-5/2 was written -3.5: the whole part of a negative amount came from floor division."""
    from fractions import Fraction

    from mathcomp_tests.data.steps import number

    values = ("5/2", "-5/2", "-1/20", "123/20", "-7", "99/100")
    assert [number(Fraction(v)) for v in values] == ["2.5", "-2.5", "-0.05", "6.15", "-7", "0.99"]
    with pytest.raises(ValueError, match="no short decimal form"):
        number(Fraction(1, 3))


def test_paper_proportions_on_request() -> None:
    labels = Counter(s.label for s in generated_sets.balanced(450, seed=3, labels="paper"))
    for label, count in generated_sets.PAPER_LABELS.items():
        assert abs(labels[label] / 450 - count / 300) < 0.06, labels
