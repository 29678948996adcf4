"""Sets of generated scenarios, drawn from a seed in the paper's proportions (data/generate.py builds each row).

- ``balanced(n, seed)`` is what the CLI and the suite's generated cases use: byte-identical rows for a seed,
  labels balanced (or in the paper's proportions), and balanced as a set: the naive-sum reader and the
  largest-number rule are kept near chance row by row (``shortcuts`` measures them).
- ``fixtures(seed)`` are the bundled 300 (``fixtures/scenarios.csv``), to ``fixture_plan``'s exact counts.
- ``drawn(rng, label)`` is one row with no balance target: the demonstration model's training data.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction

from ..types import LABELS, Label, Scenario
from .equations import compare, evaluate
from .generate import NoScenario, RandomDraw, Shape, build, choice, stated_amounts, topics_for, verified
from .shortcuts import numerals

# Category x quantity counts for the bundled 300: the paper's marginals (Tables 2 and 3).
PLAN: dict[tuple[str, str], int] = {
    ("Dining", "money"): 27, ("Dining", "others"): 5, ("Dining", "weight"): 2,
    ("Education", "money"): 6, ("Education", "time"): 21, ("Education", "others"): 8,
    ("Entertainment", "money"): 14, ("Entertainment", "time"): 14, ("Entertainment", "others"): 2,
    ("Health & Fitness", "distance"): 22, ("Health & Fitness", "time"): 8,
    ("Health & Fitness", "weight"): 9, ("Health & Fitness", "others"): 1,
    ("Home & Living", "money"): 15, ("Home & Living", "time"): 10, ("Home & Living", "distance"): 3,
    ("Home & Living", "others"): 4,
    ("Personal Care", "money"): 16, ("Personal Care", "others"): 1, ("Personal Care", "weight"): 1,
    ("Shopping", "money"): 23, ("Shopping", "others"): 3, ("Shopping", "weight"): 1,
    ("Technology", "money"): 21, ("Technology", "others"): 4, ("Technology", "time"): 3,
    ("Technology", "distance"): 1,
    ("Transportation", "distance"): 23, ("Transportation", "money"): 4, ("Transportation", "time"): 2,
    ("Travel", "distance"): 13, ("Travel", "money"): 11, ("Travel", "time"): 2,
}  # fmt: skip
PAPER_LABELS: dict[Label, int] = {"equal": 94, "less": 119, "more": 87}
PAPER_VERBAL = 142
FIXTURE_SEED = 1
"""The seed ``fixtures/scenarios.csv`` was generated with (``mathcomp generate --fixtures``)."""


def _readings(s: Scenario) -> tuple[Label, Label]:
    """What the naive-sum reader and the largest-number rule answer (the amounts stated read once for both)."""
    a, b = numerals(stated_amounts(s.text_a)), numerals(stated_amounts(s.text_b))
    naive = compare(sum(a, Fraction(0)), sum(b, Fraction(0)))
    return naive, compare(max(a, default=Fraction(0)), max(b, default=Fraction(0)))


def balanced_row(
    rng: random.Random, cell: tuple[str, str], label: Label, verbal: bool, row_id: str
) -> Scenario:
    """One row whose naive-sum and largest-number readings are drawn independently of its label."""
    d = RandomDraw(rng)
    others = [y for y in LABELS if y != label and y != "equal"]
    if label == "equal":
        naive = choice(d, ("more", "less") if verbal else ("equal", "equal", "equal", "more", "less"))
        largest = choice(d, ("more", "less"))
    else:
        naive = label if rng.random() < 0.6 else others[0]
        largest = label if rng.random() < 0.5 else others[0]
    for _ in range(4000):
        shape = Shape(choice(d, topics_for(*cell)), label, verbal, plain_only=naive == "equal" == label)
        try:
            s = build(d, shape, row_id)
        except NoScenario:
            continue
        if _readings(s) == (naive, largest):
            try:
                return verified(s)
            except NoScenario:
                continue
    raise RuntimeError(f"no scenario for {cell}, {label}, verbal={verbal} after 4000 tries")


def drawn(
    rng: random.Random, label: Label, plain_only: bool = False, sizes: tuple[int, ...] = (2, 3)
) -> Scenario:
    """One scenario with no balance target (for training data): a topic in the paper's proportions;
    ``plain_only`` keeps to plain amounts, where adding up the numerals gives the answer."""
    d = RandomDraw(rng)
    cells, weights = _cells()
    while True:
        cell = rng.choices(cells, weights=weights)[0]
        shape = Shape(
            choice(d, topics_for(*cell)), label, None, plain_only, sizes if plain_only else Shape.sizes
        )
        try:
            s = build(d, shape)
        except NoScenario:
            continue
        if compare(evaluate(s.expr_a), evaluate(s.expr_b)) != label:
            raise AssertionError(f"generator bug: {s.expr_a} vs {s.expr_b} is not {label}")
        return s


def _cells() -> tuple[list[tuple[str, str]], list[int]]:
    return list(PLAN), list(PLAN.values())


def balanced(n: int, seed: int, labels: str = "balanced") -> Iterator[Scenario]:
    """``n`` scenarios, the same for the same seed: labels balanced (or in the paper's proportions),
    categories and quantities and verbal numbers in the paper's proportions."""
    rng = random.Random(seed)
    cells, weights = _cells()
    for i in range(n):
        if labels == "balanced":
            label: Label = LABELS[i % 3]
        else:
            label = rng.choices(list(PAPER_LABELS), weights=list(PAPER_LABELS.values()))[0]
        cell = rng.choices(cells, weights=weights)[0]
        verbal = rng.random() < PAPER_VERBAL / 300
        yield balanced_row(rng, cell, label, verbal, str(i + 1))


def fixture_plan(seed: int) -> list[tuple[tuple[str, str], Label, bool]]:
    """The bundled 300's rows: exact category x quantity counts, 94/119/87 labels, 142 verbal rows."""
    rng = random.Random(seed)
    cells = [c for c, k in PLAN.items() for _ in range(k)]
    labels: list[Label] = [y for y, k in PAPER_LABELS.items() for _ in range(k)]
    verbal = [True] * PAPER_VERBAL + [False] * (300 - PAPER_VERBAL)
    rng.shuffle(labels)
    rng.shuffle(verbal)
    return list(zip(cells, labels, verbal, strict=True))


def fixtures(seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    return [balanced_row(rng, cell, y, v, str(i + 1)) for i, (cell, y, v) in enumerate(fixture_plan(seed))]
