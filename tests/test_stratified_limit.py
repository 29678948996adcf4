"""--limit=N keeps the dataset's categories and gold labels in proportion, the same cut every time.

The bundled file opens with 30 Dining rows: `--limit=30` used to take those, and a gate run cut that
way saw none of the other categories.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite
from helpers.usage import refused

from mathcomp_tests.data import datasets

ONE_CASE = ("--model=symbolic", "--framings=neutral", "--positions=end")


def _bundled() -> dict[str, tuple[str, str]]:
    """Scenario id -> (category, gold label) of the bundled dataset."""
    found = datasets.resolve(None, None, Path(".mathcomp-cache"))
    return {s.id: (s.category, s.label) for s in found.scenarios}


def test_a_cut_keeps_categories_and_labels_in_proportion_and_says_how_it_drew(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--limit=30", *ONE_CASE)
    assert run.returncode == 0, run.output
    assert "--limit=30: 30 of 300 scenarios, drawn in proportion to category x label" in run.output
    every = _bundled()
    ids = run.summary["scenario_ids"]
    assert len(ids) == 30 == len(set(ids))
    assert ids == sorted(ids, key=list(every).index), "the cut keeps file order"
    for position in (0, 1):  # category, then gold label
        whole = Counter(v[position] for v in every.values())
        cut = Counter(every[i][position] for i in ids)
        for value, count in whole.items():
            assert abs(cut[value] - 30 * count / len(every)) < 1.5, (value, cut, whole)
    again = run_suite(tmp_path, "--limit=30", *ONE_CASE)
    assert again.summary["scenario_ids"] == ids, "the same cut every time"


def test_a_baseline_of_the_first_rows_is_another_selection(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """A baseline written when --limit took the first N rows does not stand for today's cut of N."""
    baseline = tmp_path / "baseline.txt"
    made = run_suite(tmp_path, "--limit=10", f"--update-baseline={baseline}", *ONE_CASE)
    assert made.returncode == 0, made.output
    drawn = made.summary["scenario_ids"]
    text = baseline.read_text()
    assert f"scenarios: {' '.join(drawn)}\n" in text
    first = [str(n) for n in range(1, 11)]
    assert drawn != first
    baseline.write_text(text.replace(f"scenarios: {' '.join(drawn)}\n", f"scenarios: {' '.join(first)}\n"))
    compared = refused(pytester, tmp_path, "--limit=10", f"--baseline={baseline}", *ONE_CASE)
    assert compared.returncode == 4, compared.output
    assert "other scenarios (10 in the baseline, 10 in the run; only in the baseline: " in compared.output


def test_a_limit_above_the_dataset_is_said_in_the_header_not_silently_capped(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--limit=1000", *ONE_CASE)
    assert run.returncode == 0, run.output
    assert "--limit=1000: all 300 scenarios (the dataset has no more; the limit is above it)" in run.output
    assert len(run.records) == 300
