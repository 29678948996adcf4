"""The gate, exact to the last digit: a model against its own baseline compares as a copy, and a damaged
format-4 baseline is refused, never read as a case that cannot rise."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.scoring import baseline, soft_paired
from mathcomp_tests.scoring.baseline_format import BaselineError, probs_text

LIMITS = dict.fromkeys(("less", "more", "equal"), 0.05)
DEMO = ("--model=hf:fixtures/models/mathcomp-tiny", "--scoring=logprob", "--limit=60", "--generated=0")
CASES = ("--framings=neutral,direct-less", "--positions=end")


def _probabilities(n: int, seed: int) -> dict[str, dict[str, float]]:
    """Full-precision label probabilities, as a run records them (small spread: where rounding showed)."""
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        less, more = 0.4 + rng.uniform(0, 0.002), 0.35 + rng.uniform(0, 0.002)
        out[str(i)] = {"less": less, "more": more, "equal": 1 - less - more}
    return out


def test_full_precision_against_the_files_thousandths_is_no_difference() -> None:
    golds = {str(i): ("more", "equal", "less")[i % 3] for i in range(60)}
    run = _probabilities(60, 1)
    order = list(run)
    kept = baseline.parse(
        Path("b.txt"),
        "format: 4\nmodel: m\ndataset: d\ndataset-sha256: 0\nprompt-set: hf\n"
        f"scenarios: {' '.join(order)}\ncases: 1\ncase c: {'l' * 60} | {probs_text([run[s] for s in order])}\n",
    ).probs["c"]
    soft = soft_paired.soft_changes(golds, run, kept, LIMITS, 0.05)
    assert [(c.difference, c.p_value) for c in soft.values()] == [(0.0, 1.0)] * 3


def test_the_demo_model_against_its_own_baseline_compares_as_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "baseline.txt"
    first = run_suite(tmp_path / "first", *DEMO, *CASES, f"--update-baseline={path}")
    assert first.returncode == 0, first.output[-3000:]
    again = run_suite(tmp_path / "again", *DEMO, *CASES, f"--baseline={path}")
    assert again.returncode == 0, again.output[-3000:]
    soft = [(c["case"], y, t) for c in again.summary["cases"] for y, t in c["baseline"]["soft"].items()]
    assert len(soft) == 6, soft
    assert [(t["difference"], t["p_value"]) for _, _, t in soft] == [(0.0, 1.0)] * 6, soft
