"""Reading the numbers a scenario sentence states, and the numbers its equation writes, for the audit.

The audit compares the two: a number the equation uses must be stated or implied by the sentence, and an
amount the sentence states (a refund, a break) must not be left out of the equation.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from .equations import normalise

Kind = Literal["number", "percent", "multiplier", "fraction"]

_CARDINALS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven"])}
_CARDINALS |= {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14}
_CARDINALS |= {"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
_TENS["ninety"] = 90
_MULTIPLIERS = {"twice": 2, "double": 2, "doubled": 2, "triple": 3, "tripled": 3, "thrice": 3}
_MULTIPLIERS |= {"quadruple": 4, "quadrupled": 4, "dozen": 12, "quarterly": 3}
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5}
_DENOMINATORS |= {"sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_WORD = "|".join(sorted([*_CARDINALS, *_TENS], key=len, reverse=True))
_DENOM = "|".join(sorted(_DENOMINATORS, key=len, reverse=True))

_DIGITS = re.compile(
    r"(?P<dollar>\$\s?)?(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d])"
    r"(?P<pct>\s?%|\s?percent\b)?"
)
_FRACTION = re.compile(rf"\b(?:(?P<n>a|an|one|two|three|four|{_WORD})[\s-]+)?(?P<d>{_DENOM})s?\b", re.I)
_NUMBER_WORD = re.compile(
    rf"\b(?P<tens>{'|'.join(_TENS)})(?:-(?P<one>{_WORD}))?\b|\b(?P<word>{_WORD})\b", re.I
)
_MULTIPLIER = re.compile(rf"\b(?P<m>{'|'.join(_MULTIPLIERS)})\b|\b(?P<times>{_WORD}|\d+) times\b", re.I)
_UNIT = re.compile(r"[\s-]*(?:of\s+)?([A-Za-z]+)")
_CLAUSE = re.compile(r"[,;]|\b(?:and|then|but|plus|while|before|after)\b", re.I)

# Words that mark an amount taken away. Not "credit" as in "a 3-credit course" or "per credit", not
# "return" as in "drove back to return home", and "off" only as in "20% off".
DEDUCTION = re.compile(
    r"\b(?:refund\w*|rebate|discount\w*|coupon|(?<!-)(?<!per )credit(?!\s+card)|returned|sold|gave away|"
    r"given away|deleted|removed|lost|skipped|withdr[ae]w\w*|cancel+ed|waived|deducted|subtracted|"
    r"compressed|reduced|decreased)\b|(?:%|\bpercent)\s*off\b",
    re.I,
)

# What each studied quantity is measured in: a stated number with one of these units is an amount of it.
DIMENSIONS: dict[str, frozenset[str]] = {
    "money": frozenset({"$", "dollar", "cent"}),
    "time": frozenset({"second", "sec", "minute", "min", "hour", "hr", "day", "week", "month", "year"}),
    "distance": frozenset({"mile", "kilometer", "km", "meter", "metre", "m", "yard", "foot", "feet", "lap"}),
    "weight": frozenset({"pound", "lb", "kilogram", "kg", "gram", "g", "ounce", "oz", "ton"}),
}
MINUTES = {"second": Fraction(1, 60), "sec": Fraction(1, 60), "minute": Fraction(1), "min": Fraction(1)}
MINUTES |= {"hour": Fraction(60), "hr": Fraction(60), "day": Fraction(1440), "week": Fraction(10080)}
# Conversion factors an equation may use without the sentence stating them, when these words appear.
_CONVERSIONS = (
    (60, r"\b(?:hour|minute|second|hr|mph)"),
    (24, r"\bday"),
    (7, r"\bweek"),
    (12, r"\b(?:year|month|dozen|inch|foot|feet)"),
    (100, r"%|\b(?:percent|cent)"),
    (1000, r"\b(?:kilo|km|kg|mb|gb|meter|gram)"),
)


@dataclass(frozen=True)
class Quantity:
    """A number a sentence states (digits, number words, "twice", "a third", "20%") and its context."""

    value: Fraction
    kind: Kind
    text: str
    start: int
    unit: str
    clause: str

    @property
    def forms(self) -> frozenset[Fraction]:
        """The values an equation may write for it: 20% as 20, 0.2, 1.2 or 0.8; "a third" as 3 or 1/3."""
        v = self.value
        if self.kind == "percent":
            return frozenset({v, v / 100, 1 + v / 100, 1 - v / 100})
        if self.kind == "fraction":
            return frozenset({v, Fraction(v.denominator), Fraction(v.numerator), 1 - v})
        return frozenset({v})

    @property
    def deduction(self) -> bool:
        """True when its clause says the amount is taken away (a refund, a deletion, a discount)."""
        return bool(DEDUCTION.search(self.clause))

    def dimension(self) -> str | None:
        return next((d for d, units in DIMENSIONS.items() if self.unit in units), None)


def stated(sentence: str) -> list[Quantity]:
    """Every number the sentence states, in order; spans never overlap."""
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []
    breaks = [(m.start(), m.end()) for m in _CLAUSE.finditer(sentence)]

    def add(match: re.Match[str], value: Fraction, kind: Kind, text: str | None = None) -> None:
        start, end = match.span()
        if any(start < e and s < end for s, e in taken):
            return
        taken.append((start, end))
        unit = "$" if match.groupdict().get("dollar") else _unit(sentence, end)
        if kind == "percent":
            unit = "%"
        found.append(Quantity(value, kind, text or match.group(), start, unit, _clause(sentence, start, breaks)))

    for m in _DIGITS.finditer(sentence):
        value = Fraction(m.group("num").replace(",", ""))
        add(m, value, "percent" if m.group("pct") else "number", m.group("num"))
    for m in _FRACTION.finditer(sentence):
        numerator = _word_value(m.group("n") or "one")
        add(m, Fraction(numerator, _DENOMINATORS[m.group("d").lower()]), "fraction")
    for m in _MULTIPLIER.finditer(sentence):
        times = _MULTIPLIERS.get((m.group("m") or "").lower()) or _word_value(m.group("times"))
        add(m, Fraction(times), "multiplier")
    for m in _NUMBER_WORD.finditer(sentence):
        if m.group("tens"):
            said = _TENS[m.group("tens").lower()] + _CARDINALS.get((m.group("one") or "").lower(), 0)
        else:
            said = _CARDINALS[m.group("word").lower()]
        add(m, Fraction(said), "number")
    return sorted(found, key=lambda q: q.start)


def conversions(sentence: str) -> set[Fraction]:
    """Unit factors (60 minutes an hour, 100 for a percentage) the sentence's units make available."""
    return {Fraction(f) for f, pattern in _CONVERSIONS if re.search(pattern, sentence, re.I)}


def _word_value(word: str) -> int:
    w = word.lower()
    if w in ("a", "an"):
        return 1
    if w.isdigit():
        return int(w)
    return _CARDINALS[w] if w in _CARDINALS else _TENS.get(w, 1)


def _unit(sentence: str, end: int) -> str:
    m = _UNIT.match(sentence, end)
    if not m:
        return ""
    word = m.group(1).lower()
    if word in ("feet", "foot"):
        return "foot"
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _clause(sentence: str, at: int, breaks: list[tuple[int, int]]) -> str:
    """The stretch of the sentence around position ``at`` between its clause ``breaks`` (the spans of
    _CLAUSE's matches, in order)."""
    start = max((end for _, end in breaks if end <= at), default=0)
    stop = min((begin for begin, _ in breaks if begin > at), default=len(sentence))
    return sentence[start:stop].strip()


@dataclass(frozen=True)
class Term:
    """One number written in an equation: its value, where it is, and what else the equation computes."""

    value: Fraction
    text: str
    start: int
    end: int
    negative: bool
    others: frozenset[Fraction]


class Equation:
    """An equation as a tree of exact values: its numbers, their signs, and every sub-total it forms."""

    def __init__(self, text: str):
        self.source = normalise(text).split("=")[0].strip()
        tree = ast.parse(self.source, mode="eval").body
        self.total = _value(tree, self.source)
        subtotals: list[tuple[Fraction, set[int]]] = []  # each sub-expression: its value, the numbers in it
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp | ast.Constant):
                try:
                    value = _value(node, self.source)
                except ZeroDivisionError:
                    continue
                subtotals.append((value, {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}))
        self.terms: list[Term] = []
        """Every number in the equation; a term's ``others`` are the sub-totals that do not contain it."""
        for node, negative in _signed(tree, False):
            if isinstance(node, ast.Constant):
                text = _text(node, self.source)
                others = frozenset(v for v, inside in subtotals if id(node) not in inside)
                end = node.col_offset + len(text)
                self.terms.append(Term(Fraction(text), text, node.col_offset, end, negative, others))

    def with_terms(self, values: dict[Term, Fraction]) -> Fraction:
        """The equation's total with some of its numbers replaced."""
        source = self.source
        for term in sorted(values, key=lambda t: t.start, reverse=True):
            source = f"{source[: term.start]}({values[term]}){source[term.end :]}"
        return _value(ast.parse(source, mode="eval").body, source)


def _text(node: ast.expr, source: str) -> str:
    # Offsets count UTF-8 bytes; a normalised equation is plain ASCII, so they index the string directly.
    return source[node.col_offset : node.end_col_offset]


def _value(node: ast.expr, source: str) -> Fraction:
    """Exact arithmetic over the tree; numbers are read from their source text, never through floats."""
    if isinstance(node, ast.Constant):
        return Fraction(_text(node, source))
    if isinstance(node, ast.UnaryOp):
        inner = _value(node.operand, source)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, source), _value(node.right, source)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left / right
    raise ValueError(f"not arithmetic: {ast.dump(node)}")


def _signed(node: ast.expr, negative: bool) -> Iterator[tuple[ast.expr, bool]]:
    """Each node with whether it is taken away from the total (the right side of a minus, or negated)."""
    yield node, negative
    if isinstance(node, ast.BinOp):
        yield from _signed(node.left, negative)
        flip = isinstance(node.op, ast.Sub)
        yield from _signed(node.right, negative != flip)
    elif isinstance(node, ast.UnaryOp):
        yield from _signed(node.operand, negative != isinstance(node.op, ast.USub))
