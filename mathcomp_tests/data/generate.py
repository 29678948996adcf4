"""Fresh comparison scenarios: one builder, driven by Hypothesis (to shrink) or by a seeded random source.

``build`` makes one scenario from a stream of choices: a topic (category, quantity, task), per person a
chain of 2-6 steps (see ``steps``), and B's or A's free amount solved so that the exact totals give the
wanted label, `equal` included, each side through its own steps. The label comes from the step values
(exact Fractions) and is checked by sympy on the written equations, never read from the text.

- ``scenarios()`` is a Hypothesis strategy: shrinking goes to fewer steps, smaller numbers, plain amounts.
- ``RandomDraw`` drives it from a seeded ``random.Random``: data/generated_sets.py draws the seeded sets
  (``balanced``, the bundled 300, training's rows) with it.
- ``to_csv`` writes rows in the dataset schema.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

from ..types import LABELS, Label, Scenario
from . import numbers, steps
from .equations import compare, evaluate
from .scenarios import COLUMNS, Row
from .steps import Scale, Step, Topic


class Draw(Protocol):
    """Where the builder's choices come from."""

    def integer(self, low: int, high: int) -> int: ...


class RandomDraw:
    """Choices from ``random.Random(seed)``: the same seed, the same scenarios."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


class HypothesisDraw:
    """Choices from a Hypothesis ``draw``: failures shrink towards the first option and the low end."""

    def __init__(self, draw: Callable[[Any], Any]):
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def integer(self, low: int, high: int) -> int:
        return int(self.draw(self.st.integers(low, high)))


def choice(d: Draw, options: Sequence[Any]) -> Any:
    return options[d.integer(0, len(options) - 1)]


class NoScenario(Exception):
    """These choices give no valid scenario (an amount out of range, a label not reached)."""


def _nice(value: Fraction, scale: Scale) -> bool:
    whole = scale.unit in ("minutes", "pounds", "")
    return value > 0 and (value.denominator == 1 if whole else 100 % value.denominator == 0)


_CENTS = (Fraction(0), Fraction(0), Fraction(1, 2), Fraction(3, 4), Fraction(99, 100), Fraction(1, 4))
"""What a dollar amount adds to its whole dollars, drawn from these."""


def _value(d: Draw, scale: Scale, multiple: int = 1) -> Fraction:
    """An amount on the scale's grain (money: whole dollars or common cents), divisible by ``multiple``: a
    whole number of steps, at least one, within the scale's bounds. Worked in integers (the step is
    ``num / den``): Fraction arithmetic here was a third of the generator's time."""
    num, den = (scale.grain.numerator * multiple, scale.grain.denominator) if scale.unit != "$" else (multiple, 1)
    top = max(1, scale.high.numerator * den // (scale.high.denominator * num))
    low = max(1, scale.low.numerator * den // (scale.low.denominator * num))
    value = Fraction(num * d.integer(low, top), den)
    if scale.unit == "$" and multiple == 1:
        value += choice(d, _CENTS)
    return value


KINDS = ("plain", "count", "multiple", "share", "named", "total", "percent", "deduction", "discount", "tax")
VERBAL_KINDS = frozenset({"multiple", "share", "named", "total"})


def side(
    d: Draw, topic: Topic, scale: Scale, n: int, verbal: bool | None, plain_only: bool = False
) -> tuple[list[Step], set[int]]:
    """A chain of ``n`` steps and the indices of the plain amounts nothing refers to (solvable)."""
    clauses = list(topic.clauses)
    items = list(topic.items)
    out: list[Step] = []
    referenced: set[int] = set()
    kinds = [k for k in KINDS if verbal is not False or k not in VERBAL_KINDS]
    if topic.quantity != "money":
        kinds = [k for k in kinds if k not in ("discount", "tax")]
    if topic.quantity in ("weight", "others"):
        kinds = [k for k in kinds if k not in ("named", "total")]
    if plain_only:
        kinds = ["plain"]
    for i in range(n):
        clause = (
            clauses.pop(d.integer(0, len(clauses) - 1)) if clauses else topic.clauses[i % len(topic.clauses)]
        )
        kind = "plain" if i == 0 else choice(d, kinds)
        prev = out[-1] if out else None
        step: Step | None = None
        if kind == "count":
            k = d.integer(2, 6)
            words = bool(verbal) and d.integer(0, 1) == 1
            item = items.pop(d.integer(0, len(items) - 1)) if items else topic.items[0]
            each = _value(d, Scale(scale.unit, scale.low, scale.high / 3, scale.grain))
            step = steps.count(k, each, scale, topic, item, words)
        elif (
            kind in ("multiple", "share", "percent", "deduction")
            and prev is not None
            and prev.kind == "plain"
        ):
            if kind == "multiple":
                step = steps.relative(prev, d.integer(2, 3), "multiple", topic, clause, named=False)
            elif kind == "share":
                step = steps.relative(prev, d.integer(2, 4), "share", topic, clause, named=False)
            elif kind == "percent":
                p = choice(d, (10, 20, 25, 50, 15, 30, 40))
                step = steps.percent(prev, p, d.integer(0, 1) == 0, topic, clause)
            else:
                value = _value(d, Scale(scale.unit, scale.grain, prev.value / 2, scale.grain))
                if value >= prev.value:
                    raise NoScenario("deduction as large as the amount")
                item = choice(d, topic.items)
                step = steps.deduction(value, scale, topic, d.integer(0, 5), item)
            referenced.add(len(out) - 1)
        elif kind == "named":
            named = [j for j, s in enumerate(out) if s.kind == "plain" and j < len(out) - 1]
            if named:
                j = choice(d, named)
                multiple = d.integer(0, 1) == 0
                n_ = d.integer(2, 3) if multiple else d.integer(2, 4)
                step = steps.relative(
                    out[j], n_, "multiple" if multiple else "share", topic, clause, named=True
                )
                referenced.add(j)
        elif kind == "total" and len(out) >= 2 and all(s.kind == "plain" for s in out):
            n_ = d.integer(2, 4)
            running = steps.total(out)
            if _nice(running / n_, scale):
                step = steps.share_of_total(running, [s.expr for s in out], n_, topic, clause)
                referenced.update(range(len(out)))
        elif kind == "discount":
            p = choice(d, (10, 20, 25, 50, 15, 30))
            item = items.pop(d.integer(0, len(items) - 1)) if items else topic.items[0]
            step = steps.discounted(_value(d, scale, 1), p, scale, topic, item)
        elif kind == "tax":
            step = steps.taxed(_value(d, scale), choice(d, (5, 8, 10, 20)), scale, topic, clause)
        if step is None or not _nice(step.value, scale):
            step = steps.plain(_value(d, scale), scale, topic, clause)
        out.append(step)
    free = {i for i, s in enumerate(out) if s.kind == "plain" and i not in referenced}
    return out, free


@dataclass(frozen=True)
class Shape:
    """What one row should be: its topic and label, whether it states a number in words."""

    topic: Topic
    label: Label
    verbal: bool | None = None
    plain_only: bool = False
    sizes: tuple[int, ...] = (2, 3, 4, 3, 4, 5, 6)
    """Steps per person, drawn from these (the first is where Hypothesis shrinks to)."""


def build(d: Draw, shape: Shape, row_id: str = "gen") -> Scenario:
    """One verified scenario of ``shape``; NoScenario when these choices do not give one."""
    topic = shape.topic
    _, units = steps.vocabulary()
    scale = topic.scale(choice(d, topic.units or units[topic.quantity]))
    verbal = False if shape.plain_only else shape.verbal
    sides = []
    for _ in ("A", "B"):
        n = choice(d, shape.sizes)
        sides.append(side(d, topic, scale, n, verbal, shape.plain_only))
    solve = d.integer(0, 1)
    chain, free = sides[solve]
    other = steps.total(sides[1 - solve][0])
    if not free:
        raise NoScenario("no free amount to solve for")
    slot = choice(d, sorted(free))
    label = shape.label
    if label == "equal":
        target = other
    else:
        gap = other * d.integer(3, 40) / 100
        gap -= gap % scale.grain
        gap = max(gap, scale.grain)
        up = (label == "more") == (solve == 1)  # B more than A: raise B or lower A
        target = other + gap if up else other - gap
    x = chain[slot].value + target - steps.total(chain)
    if not (scale.low <= x <= scale.high * 5 / 4) or not _nice(x, scale):
        raise NoScenario("the solved amount is out of range")
    clause = next(c for c in topic.clauses if c.noun == chain[slot].noun)
    chain[slot] = steps.plain(x, scale, topic, clause)
    a, b = sides[0][0], sides[1][0]
    text_a, text_b = steps.sentence("[PERSON_A]", a), steps.sentence("[PERSON_B]", b)
    for text in (text_a, text_b):
        if not 2 <= len(stated_amounts(text)) <= 6:
            raise NoScenario("too many amounts in one sentence")
    expr_a, expr_b = steps.equation(a), steps.equation(b)
    total_a, total_b = steps.total(a), steps.total(b)
    if compare(total_a, total_b) != label:
        raise NoScenario("label not reached")
    said = any(s.verbal for s in a + b)
    if shape.verbal is not None and said != shape.verbal:
        raise NoScenario("verbal numbers not as planned")
    return Scenario(row_id, text_a, text_b, expr_a, expr_b, total_a, total_b, label,
                    topic.category, topic.quantity, topic.task, said)  # fmt: skip


def verified(s: Scenario) -> Scenario:
    """``s`` after sympy has evaluated both written equations (the label must be the one they give) and
    the audit has read it like any dataset row (NoScenario when it finds something, say "a quarter"
    and "25% off" in one sentence, which it cannot tell apart)."""
    from .audit import check

    total_a, total_b = evaluate(s.expr_a), evaluate(s.expr_b)
    if compare(total_a, total_b) != s.label or (total_a, total_b) != (s.total_a, s.total_b):
        raise AssertionError(f"generator bug: {s.expr_a} vs {s.expr_b} is not {s.label}")
    values = dict(zip(COLUMNS, csv_row(s), strict=True))
    if check(Row(0, values, s)):
        raise NoScenario("the audit reads the row differently")
    return s


def topics_for(category: str, quantity: str) -> list[Topic]:
    topics, _ = steps.vocabulary()
    found = [t for t in topics if (t.category, t.quantity) == (category, quantity)]
    if not found:
        raise ValueError(f"vocabulary.toml has no topic for {category} / {quantity}")
    return found


@lru_cache(maxsize=8192)
def stated_amounts(text: str) -> tuple[numbers.Quantity, ...]:
    """The amounts ``text`` states (numbers.stated), read once per text."""
    return tuple(numbers.stated(text))


def scenarios(labels: Sequence[Label] = LABELS) -> Any:
    """A Hypothesis strategy of verified scenarios (any topic, the given labels)."""
    from hypothesis import assume
    from hypothesis import strategies as st

    topics, _ = steps.vocabulary()

    @st.composite
    def one(draw: Callable[[Any], Any]) -> Scenario:
        d = HypothesisDraw(draw)
        shape = Shape(choice(d, topics), choice(d, list(labels)))
        try:
            return verified(build(d, shape))
        except NoScenario:
            assume(False)
            raise

    return one()


def to_csv(rows: Sequence[Scenario]) -> str:
    """Rows in the dataset schema (placeholders, equations, labels), as the bundled CSV writes them."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for s in rows:
        writer.writerow(csv_row(s))
    return out.getvalue()


def csv_row(s: Scenario) -> list[str]:
    verbal = "TRUE" if s.verbal else "FALSE"
    return [s.id, s.text_a, s.text_b, s.category, s.quantity, s.label, s.expr_a, s.expr_b, s.task, verbal]
