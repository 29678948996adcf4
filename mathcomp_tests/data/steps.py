"""One person's chain of steps: an expression tree of exact values, rendered as a sentence and an equation.

A step is a plain amount ("$12.50 for a rug"), a count ("3 mugs at $4 each"), a multiple or a share of an
earlier amount ("twice that", "half as long as the reading", "a quarter of the total so far"), a
percentage of one ("25% more than that", "at 20% off", "plus 10% tax") or a deduction ("got $5 back",
"lost 10 minutes of that to a phone call"). Values are Fractions; the equation writes every number the
sentence states, so the audit finds nothing to add.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

VOCABULARY = Path(__file__).with_name("vocabulary.toml")
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
MULTIPLES = {2: "twice", 3: "three times"}
SHARES = {2: "half", 3: "a third", 4: "a quarter"}


@dataclass(frozen=True)
class Clause:
    template: str
    noun: str


@dataclass(frozen=True)
class Topic:
    category: str
    quantity: str
    task: str
    clauses: tuple[Clause, ...]
    items: tuple[str, ...]
    unit: str = ""
    """What an ``others`` quantity counts (servings, photos)."""
    units: tuple[str, ...] = ()
    """Units this task is measured in, when not every unit of its quantity fits."""
    high: Fraction | None = None
    """The largest single amount that is plausible for this task."""

    def scale(self, unit: str) -> Scale:
        base = SCALES[unit]
        if self.high is None:
            return base
        return Scale(unit, base.low, max(base.low * 3, min(base.high, self.high)), base.grain)


@dataclass(frozen=True)
class Scale:
    """Amounts of one unit: between low and high, on multiples of grain."""

    unit: str
    low: Fraction
    high: Fraction
    grain: Fraction


SCALES = {
    "$": Scale("$", Fraction(4), Fraction(240), Fraction(1, 4)),
    "minutes": Scale("minutes", Fraction(5), Fraction(150), Fraction(5)),
    "hours": Scale("hours", Fraction(1), Fraction(9), Fraction(1, 2)),
    "meters": Scale("meters", Fraction(100), Fraction(2000), Fraction(50)),
    "kilometers": Scale("kilometers", Fraction(1), Fraction(45), Fraction(1, 2)),
    "miles": Scale("miles", Fraction(1), Fraction(30), Fraction(1, 2)),
    "kilograms": Scale("kilograms", Fraction(2), Fraction(80), Fraction(1, 2)),
    "pounds": Scale("pounds", Fraction(4), Fraction(160), Fraction(1)),
    "": Scale("", Fraction(3), Fraction(90), Fraction(1)),
}


@cache
def vocabulary(path: Path = VOCABULARY) -> tuple[tuple[Topic, ...], dict[str, list[str]]]:
    """The topics and the units per quantity."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    topics = tuple(
        Topic(
            t["category"],
            t["quantity"],
            t["task"],
            tuple(Clause(*c.split("|")) for c in t["clauses"]),
            tuple(t["items"]),
            t.get("unit", ""),
            tuple(t.get("units", ())),
            Fraction(t["max"]) if "max" in t else None,
        )
        for t in data["topics"]
    )
    units = dict(data["units"]) | {"others": [""]}
    return topics, units


@dataclass(frozen=True)
class Step:
    """One step: its exact value, its equation fragment, its clause, and what it says about the row."""

    value: Fraction
    expr: str
    text: str
    kind: str
    negative: bool = False
    verbal: bool = False
    """True when it states a number in words ("twice", "a third", "three")."""
    noun: str = ""
    """How a later step can name it; empty when it is not a plain amount."""


def number(value: Fraction) -> str:
    """12, 12.5, 12.25: exact short decimals only (a generator bug otherwise)."""
    numerator, denominator = value.numerator, value.denominator
    if denominator == 1:
        return str(numerator)
    for places in (1, 2):
        scale = 10**places
        if scale % denominator == 0:  # value * scale is whole (value is in lowest terms): integers only
            whole, part = divmod(abs(numerator) * (scale // denominator), scale)
            return f"{'-' if value < 0 else ''}{abs(whole)}.{part:0{places}d}"
    raise ValueError(f"{value} has no short decimal form")


def amount(value: Fraction, scale: Scale, topic: Topic) -> str:
    """``$12.50``, ``45 minutes``, ``1 hour``, ``12 servings``."""
    if scale.unit == "$":
        text = number(value)
        return f"${text}0" if len(text.partition(".")[2]) == 1 else f"${text}"
    unit = topic.unit if topic.quantity == "others" else scale.unit
    if value == 1 and unit.endswith("s"):
        unit = unit[:-1]
    return f"{number(value)} {unit}"


def plural(item: str) -> str:
    head, sep, tail = item.partition(" of ")
    word = head.rsplit(" ", 1)
    last = word[-1]
    last = last + "es" if last.endswith(("s", "sh", "ch")) else last + "s"
    return " ".join([*word[:-1], last]) + (sep + tail if sep else "")


def _relative(quantity: str, topic: Topic, kind: str, n: int) -> str:
    """'twice that' for money, 'half as long' for time, 'a third as many photos' for counts."""
    if kind == "multiple":
        word = MULTIPLES[n]
        return {
            "money": f"{word} that",
            "time": f"{word} as long",
            "distance": f"{word} as far",
            "weight": f"{word} that amount",
        }.get(quantity, f"{word} as many {topic.unit}")
    word = SHARES[n]
    return {
        "money": f"{word} of that" if n > 2 else "half that",
        "time": f"{word} as long",
        "distance": f"{word} as far",
        "weight": f"{word} of that amount" if n > 2 else "half that amount",
    }.get(quantity, f"{word} as many {topic.unit}")


def plain(value: Fraction, scale: Scale, topic: Topic, clause: Clause) -> Step:
    return Step(
        value,
        number(value),
        clause.template.format(amt=amount(value, scale, topic)),
        "plain",
        noun=clause.noun,
    )


def relative(base: Step, n: int, kind: str, topic: Topic, clause: Clause, named: bool) -> Step:
    """A multiple (kind ``multiple``) or a share (``share``) of ``base``, as "that" or by its name."""
    value = base.value * n if kind == "multiple" else base.value / n
    expr = f"({n}×{base.expr})" if kind == "multiple" else f"({base.expr}/{n})"
    phrase = _relative(topic.quantity, topic, kind, n)
    if named and topic.quantity in ("money", "time", "distance"):
        head = phrase.removesuffix(" that").removesuffix(" of")
        if topic.quantity == "money":
            head = head if kind == "multiple" else f"{SHARES[n]} as much"
            head = head.replace("twice", "twice as much").replace("three times", "three times as much")
        phrase = f"{head} as {base.noun}"
    return Step(value, expr, clause.template.format(amt=phrase), kind, verbal=True)


def share_of_total(total: Fraction, exprs: list[str], n: int, topic: Topic, clause: Clause) -> Step:
    word = SHARES[n]
    phrase = {
        "money": f"{word} of everything so far",
        "time": f"{word} of the time so far",
        "distance": f"{word} of the distance so far",
    }[topic.quantity]
    return Step(
        total / n, f"(({' + '.join(exprs)})/{n})", clause.template.format(amt=phrase), "total", verbal=True
    )


def percent(base: Step, p: int, up: bool, topic: Topic, clause: Clause) -> Step:
    """``p``% more or less than ``base`` ("25% farther than that")."""
    factor = Fraction(100 + p if up else 100 - p, 100)
    more = {"time": "more time", "distance": "farther" if up else "less"}.get(topic.quantity, "more")
    more = more if up else {"time": "less time"}.get(topic.quantity, "less")
    if topic.quantity == "others":
        more = f"{'more' if up else 'fewer'} {topic.unit}"
    phrase = f"{p}% {more} than that"
    return Step(
        base.value * factor, f"({base.expr}×{number(factor)})", clause.template.format(amt=phrase), "percent"
    )


def discounted(price: Fraction, p: int, scale: Scale, topic: Topic, item: str) -> Step:
    factor = Fraction(100 - p, 100)
    text = f"bought {_article(item)} {item} priced at {amount(price, scale, topic)} with {p}% off"
    return Step(price * factor, f"({number(price)}×{number(factor)})", text, "percent")


def taxed(price: Fraction, p: int, scale: Scale, topic: Topic, clause: Clause) -> Step:
    factor = Fraction(100 + p, 100)
    text = clause.template.format(amt=amount(price, scale, topic)) + f" plus {p}% tax"
    return Step(price * factor, f"({number(price)}×{number(factor)})", text, "percent")


def count(k: int, each: Fraction, scale: Scale, topic: Topic, item: str, words: bool) -> Step:
    many = WORDS[k] if words else str(k)
    each_text = amount(each, scale, topic)
    verb = {"money": "bought", "weight": "carried", "others": "added"}.get(topic.quantity, "did")
    if topic.quantity == "money":
        text = f"bought {many} {plural(item)} at {each_text} each"
    else:
        text = f"{verb} {many} {plural(item)} of {each_text} each"
    return Step(each * k, f"({k}×{number(each)})", text, "count", verbal=words)


_LOSSES = {
    "money": ("got {amt} back for a returned {item}", "used a {amt} coupon", "received a {amt} refund"),
    "time": ("lost {amt} of that to a phone call", "lost {amt} of that to a power cut"),
    "distance": ("skipped the last {amt} of that", "skipped {amt} of that because of roadworks"),
    "weight": ("gave away {amt} of that",),
    "others": ("removed {amt} of those", "gave away {amt} of those"),
}


def deduction(value: Fraction, scale: Scale, topic: Topic, choice: int, item: str) -> Step:
    forms = _LOSSES[topic.quantity]
    text = forms[choice % len(forms)].format(amt=amount(value, scale, topic), item=item)
    return Step(value, number(value), text, "deduction", negative=True)


def _article(item: str) -> str:
    return "an" if item[:1].lower() in "aeiou" else "a"


def sentence(person: str, steps: list[Step]) -> str:
    """``[PERSON_A] did x, did y, and did z.`` (deductions are joined with "then")."""
    parts = [s.text if not s.negative or i == 0 else f"then {s.text}" for i, s in enumerate(steps)]
    body = (
        parts[0]
        if len(parts) == 1
        else ", ".join(parts[:-1]) + (", and " if len(parts) > 2 else " and ") + parts[-1]
    )
    return f"{person} {body}."


def equation(steps: list[Step]) -> str:
    out = steps[0].expr
    for s in steps[1:]:
        out += f" - {s.expr}" if s.negative else f" + {s.expr}"
    return out


def total(steps: list[Step]) -> Fraction:
    return sum((-s.value if s.negative else s.value for s in steps), Fraction(0))
