"""Fresh comparison scenarios for training the embedded model: two sentences, their equations, the label.

A small generator of its own (words in ``vocabulary.toml``), independent of fixtures/scenarios.csv: the
model must never see the scenarios it is tested on. Every scenario is checked with the project's exact
equation evaluator before it is used, so a label can only be wrong if the evaluator is.
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from mathcomp_tests.data.equations import compare, evaluate
from mathcomp_tests.types import LABELS, Label, Scenario

VOCABULARY = Path(__file__).with_name("vocabulary.toml")


@dataclass(frozen=True)
class Topic:
    quantity: str
    category: str
    task: str
    verbs: tuple[str, ...]
    things: tuple[str, ...]


@dataclass(frozen=True)
class Scale:
    """Amounts for one unit: drawn between low and high in multiples of step; sums stay on ``grain``."""

    low: Fraction
    high: Fraction
    step: Fraction
    grain: Fraction


@dataclass(frozen=True)
class Term:
    value: Fraction
    kind: str  # "plain", "verbal" (a factor of the first amount) or "refund" (subtracted, money only)
    factor: Fraction = Fraction(1)
    phrase: str = ""


_SCALES = {
    "$": Scale(Fraction(5), Fraction(240), Fraction(1), Fraction(1, 4)),
    "minutes": Scale(Fraction(10), Fraction(120), Fraction(5), Fraction(1)),
    "hours": Scale(Fraction(1), Fraction(8), Fraction(1, 2), Fraction(1, 2)),
    "kilometers": Scale(Fraction(2), Fraction(40), Fraction(1, 2), Fraction(1, 2)),
    "miles": Scale(Fraction(1), Fraction(25), Fraction(1, 2), Fraction(1, 2)),
    "kilograms": Scale(Fraction(10), Fraction(150), Fraction(5), Fraction(1)),
    "pounds": Scale(Fraction(20), Fraction(300), Fraction(5), Fraction(1)),
    "": Scale(Fraction(3), Fraction(60), Fraction(1), Fraction(1)),
}


class Generator:
    """Deterministic for a seed: the same seed gives the same scenarios, in the same order."""

    def __init__(self, seed: int, gaps: tuple[int, int] = (2, 40), vocabulary: Path = VOCABULARY):
        with open(vocabulary, "rb") as fh:
            data = tomllib.load(fh)
        self.topics = [
            Topic(t["quantity"], t["category"], t["task"], tuple(t["verbs"]), tuple(t["things"]))
            for t in data["topics"]
        ]
        self.units: dict[str, list[str]] = data["units"]
        self.coefficients = [(c["phrase"], Fraction(*c["factor"])) for c in data["coefficients"]]
        self.rng = random.Random(seed)
        self.gaps = gaps
        """How far apart the two totals are when they differ, in percent of A's total."""
        self.count = 0

    def scenario(self, label: Label | None = None, hint: float = 0.0, equal_hint: float = 0.0) -> Scenario:
        """One verified scenario whose label is ``label`` (any label when None).

        With ``hint`` > 0, verbal coefficients become a surface cue: with probability ``hint`` a
        `more` scenario gets "twice that" in B's sentence or "half that" in A's (the mirror for `less`;
        an `equal` one gets either, at random, with probability ``equal_hint``); otherwise neither
        sentence has one. The totals, and so the label, stay exact.
        """
        rng = self.rng
        wanted: Label = label if label is not None else rng.choice(LABELS)
        lean: tuple[str | None, str | None] = (None, None)
        if hint > 0:
            lean = ("none", "none")
            if rng.random() < (hint if wanted != "equal" else equal_hint):
                up, down = {"more": ("up", "down"), "less": ("down", "up")}.get(
                    wanted, rng.sample(["up", "down"], 2)
                )
                lean = ("none", up) if rng.random() < 0.5 else (down, "none")
        while True:
            topic = rng.choice(self.topics)
            unit = rng.choice(self.units[topic.quantity])
            scale = _SCALES[unit]
            if unit == "$" and rng.random() < 0.6:
                scale = Scale(scale.low, scale.high, scale.step, Fraction(1))  # whole dollars only
            terms_a = self._terms(topic, scale, self._count(lean[0]), lean[0])
            total_a = _total(terms_a)
            target = self._target(total_a, wanted, scale)
            terms_b = self._solve(topic, scale, target, lean[1]) if target is not None else None
            if terms_b is not None:
                return self._finish(topic, unit, terms_a, terms_b, wanted)

    def natural(self) -> Scenario:
        """A scenario whose two sides are drawn independently: the label is whatever the sums give."""
        rng = self.rng
        while True:
            topic = rng.choice(self.topics)
            unit = rng.choice(self.units[topic.quantity])
            scale = _SCALES[unit]
            a = self._terms(topic, scale, rng.choice((2, 3, 3, 3, 4)))
            b = self._terms(topic, scale, rng.choice((2, 3, 3, 3, 4)))
            if _total(a) > 0 and _total(b) > 0:
                return self._finish(topic, unit, a, b, compare(_total(a), _total(b)))

    def _count(self, lean: str | None) -> int:
        return self.rng.choice((2, 3, 3, 3, 4) if lean in (None, "none") else (3, 3, 4))

    def _terms(self, topic: Topic, scale: Scale, n: int, lean: str | None = None) -> list[Term]:
        """``n`` amounts; the second may be a verbal factor of the first (``lean``: up, down, none)."""
        rng = self.rng
        terms: list[Term] = []
        for i in range(n):
            verbal = rng.random() < 0.3 if lean is None else lean in ("up", "down")
            if i == 1 and verbal:
                choices = [c for c in self.coefficients if lean is None or (c[1] > 1) == (lean == "up")]
                phrase, factor = rng.choice(choices)
                first = terms[0]
                if (first.value * factor) % scale.grain != 0:
                    step = scale.grain / factor
                    terms[0] = first = Term(max(step, first.value - first.value % step), "plain")
                terms.append(Term(first.value * factor, "verbal", factor, phrase))
                continue
            terms.append(Term(self._amount(scale), "plain"))
        if topic.quantity == "money" and n >= 3 and rng.random() < 0.15:
            refund = min(self._amount(scale), _total(terms) / 2)
            terms.append(Term(refund - refund % scale.grain or scale.grain, "refund"))
        return terms

    def _amount(self, scale: Scale) -> Fraction:
        steps = int((scale.high - scale.low) / scale.step)
        value = scale.low + scale.step * self.rng.randint(0, steps)
        if scale.grain < scale.step and self.rng.random() < 0.5:
            value += scale.grain * self.rng.randint(1, int(scale.step / scale.grain) - 1)
        return value

    def _target(self, total: Fraction, label: Label, scale: Scale) -> Fraction | None:
        if label == "equal":
            return total
        share = Fraction(self.rng.randint(*self.gaps), 100)
        gap = max(scale.grain, (total * share) - (total * share) % scale.grain)
        target = total + gap if label == "more" else total - gap
        return target if target > 0 else None

    def _solve(
        self, topic: Topic, scale: Scale, target: Fraction, lean: str | None = None
    ) -> list[Term] | None:
        """B's terms summing exactly to ``target``: all drawn at random but one, which is solved for."""
        for _ in range(20):
            terms = self._terms(topic, scale, self._count(lean), lean)
            free = [i for i, t in enumerate(terms) if t.kind == "plain" and i > 0]
            if not free:
                continue
            slot = self.rng.choice(free)
            rest = _total([t for i, t in enumerate(terms) if i != slot])
            value = target - rest
            if scale.low / 2 <= value <= scale.high * 2:
                terms[slot] = Term(value, "plain")
                return terms
        return None

    def _finish(self, topic: Topic, unit: str, a: list[Term], b: list[Term], label: Label) -> Scenario:
        self.count += 1
        text_a = _sentence("[PERSON_A]", topic, unit, a, self.rng)
        text_b = _sentence("[PERSON_B]", topic, unit, b, self.rng)
        expr_a, expr_b = _equation(a), _equation(b)
        total_a, total_b = evaluate(expr_a), evaluate(expr_b)
        if compare(total_a, total_b) != label or (total_a, total_b) != (_total(a), _total(b)):
            raise AssertionError(f"generator bug: {expr_a} vs {expr_b} is not {label}")
        return Scenario(
            id=f"gen-{self.count}",
            text_a=text_a,
            text_b=text_b,
            expr_a=expr_a,
            expr_b=expr_b,
            total_a=total_a,
            total_b=total_b,
            label=label,
            category=topic.category,
            quantity=topic.quantity,
            task=topic.task,
            verbal=any(t.kind == "verbal" for t in a + b),
        )


def _total(terms: list[Term]) -> Fraction:
    return sum((-t.value if t.kind == "refund" else t.value for t in terms), Fraction(0))


def number(value: Fraction) -> str:
    """12, 12.5, 12.25: every amount the generator makes has an exact short decimal form."""
    if value.denominator == 1:
        return str(value.numerator)
    for places in (1, 2):
        scaled = value * 10**places
        if scaled.denominator == 1:
            whole, part = divmod(scaled.numerator, 10**places)
            return f"{whole}.{part:0{places}d}"
    raise ValueError(f"{value} has no short decimal form")


def _amount_text(value: Fraction, unit: str) -> str:
    if unit == "$":
        text = number(value)
        return f"${text}0" if len(text.partition(".")[2]) == 1 else f"${text}"
    if value == 1 and unit.endswith("s"):
        unit = unit[:-1]
    return f"{number(value)} {unit}".strip()


def _sentence(person: str, topic: Topic, unit: str, terms: list[Term], rng: random.Random) -> str:
    verb = rng.choice(topic.verbs)
    things = rng.sample(topic.things, len(terms))
    link = " for " if verb == "paid" else (" on " if topic.quantity == "money" else " ")
    parts = []
    for i, (term, thing) in enumerate(zip(terms, things, strict=True)):
        if term.kind == "verbal":
            amount = term.phrase + (" many" if topic.quantity == "others" else "")
        elif term.kind == "refund":
            parts.append(f"then got {_amount_text(term.value, unit)} back for {thing}")
            continue
        else:
            amount = _amount_text(term.value, unit)
        parts.append(f"{verb} {amount}{link}{thing}" if i == 0 else f"{amount}{link}{thing}")
    body = parts[0] if len(parts) < 3 else ", ".join(parts[:-1]) + ","
    body = body if len(parts) == 1 else f"{body} and {parts[-1]}"
    return f"{person} {body}."


def _equation(terms: list[Term]) -> str:
    first = number(terms[0].value)
    out = first
    for term in terms[1:]:
        if term.kind == "verbal":
            f = term.factor
            shown = f"({f.numerator}×{first})" if f.denominator == 1 else f"({first}/{f.denominator})"
            out += f" + {shown}"
        elif term.kind == "refund":
            out += f" - {number(term.value)}"
        else:
            out += f" + {number(term.value)}"
    return out
