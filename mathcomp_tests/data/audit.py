"""Audit a MathComp CSV: does every row verify, and do its equations say what its sentences say?

``mathcomp audit PATH.csv`` (cli/audit.py) prints one line per finding (row ID, what is wrong, the label a
literal reading of the sentences gives) and the file's distributions against the paper's appendix tables.
Verification problems (a row that cannot be read, an equation that does not parse, a label the equations
contradict) decide what the dataset policies do; literal-reading findings are reported and never drop a row.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, partial
from pathlib import Path

from ..types import LABELS, Label, Scenario
from . import numbers
from .equations import compare, show
from .numbers import Quantity, Term
from .scenarios import Row
from .shortcuts import ORIGINAL, measure
from .shortcuts import lines as shortcut_lines

VERIFICATION = ("row", "duplicate", "equation", "label")
READING = ("unstated-number", "rounded-number", "omitted-deduction", "omitted-quantity")

# Shafiei, Saffari and Moosavi, "More or Less Wrong" (MathComp), appendix Tables 2-5: column -> counts.
_CATEGORIES = {
    "Dining": 34,
    "Education": 35,
    "Entertainment": 30,
    "Health & Fitness": 40,
    "Home & Living": 32,
}
_CATEGORIES |= {"Personal Care": 18, "Shopping": 27, "Technology": 29, "Transportation": 29, "Travel": 26}
PAPER: dict[str, tuple[str, str, dict[str, int]]] = {
    "category": ("Table 2", "category", _CATEGORIES),
    "studied_quantity": (
        "Table 3",
        "studied quantity",
        {"distance": 62, "money": 137, "others": 28, "time": 60, "weight": 13},
    ),
    "result_comparison": ("Table 4", "label", {"equal": 94, "less": 119, "more": 87}),
    "natural_language_coefficient": ("Table 5", "number format", {"FALSE": 158, "TRUE": 142}),
}
_FORMAT_NAMES = {"FALSE": "FALSE (Arabic numerals)", "TRUE": "TRUE (verbal expressions)"}


@dataclass(frozen=True)
class Finding:
    """One thing wrong with one row, and the label a literal reading gives (None when unknown)."""

    id: str
    line: int
    kind: str
    message: str
    literal: Label | None = None
    stored: str | None = None

    @property
    def verification(self) -> bool:
        """True when the row fails verification (policies act on it), not just the literal reading."""
        return self.kind in VERIFICATION

    def __str__(self) -> str:
        labelled = f" (labelled {self.stored})" if self.stored else ""
        reading = f"literal reading: {self.literal or '?'}{labelled}"
        return f"ID {self.id} (line {self.line}) [{self.kind}] {self.message} -> {reading}"


def audit(rows: Iterable[Row]) -> list[Finding]:
    """Every finding for every row, in file order."""
    return [f for row in rows for f in check(row)]


def check(row: Row) -> list[Finding]:
    """The row's verification problem, if any, then what a literal reading of each sentence finds."""
    stored = row.values.get("result_comparison", "").lower() or None
    s = row.scenario
    if s is None:
        return [Finding(row.id, row.line, row.kind or "row", row.problem or "", None, stored)]
    notes_a, literal_a = _read_safely(s, "A")
    notes_b, literal_b = _read_safely(s, "B")
    literal: Label | None = None
    totals = ""
    if literal_a is not None and literal_b is not None:
        literal = compare(literal_a, literal_b)
        if notes_a or notes_b:
            totals = f"; read literally, A totals {show(literal_a)}, B {show(literal_b)}"
    out = [Finding(row.id, row.line, row.kind, row.problem or "", literal, stored)] if row.kind else []
    return out + [Finding(row.id, row.line, k, m + totals, literal, stored) for k, m in notes_a + notes_b]


def _read_safely(s: Scenario, side: str) -> tuple[list[tuple[str, str]], Fraction | None]:
    """The literal reading is a heuristic: spellings sympy accepts and Python does not (``007``) skip it."""
    sentence, expr = (s.text_a, s.expr_a) if side == "A" else (s.text_b, s.expr_b)
    try:
        notes, total = _read(sentence, expr, side, s.quantity)
    except (SyntaxError, ValueError, ZeroDivisionError):
        return [], None
    return list(notes), total


@lru_cache(maxsize=1 << 13)
def _read(
    sentence: str, expr: str, side: str, quantity: str
) -> tuple[tuple[tuple[str, str], ...], Fraction | None]:
    """Compare one sentence with its equation: numbers the equation invents, amounts it leaves out.

    Returns the findings and the total a literal reading of the sentence gives (None when unknown). Kept
    per sentence and equation: a generated row is audited as it is made and again as its file is read.
    """
    where = f"{'equation_sentence1' if side == 'A' else 'equation_sentence2'} {expr!r}"
    qs = numbers.stated(sentence)
    equation = numbers.Equation(expr)
    factors = numbers.conversions(sentence)
    used, bare, pending = _match(equation.terms, qs, factors)
    notes: list[tuple[str, str]] = []
    swaps: dict[Term, Fraction] = {}
    unmatched: list[Term] = []
    for term in pending:
        pool: list[tuple[Fraction, int | None]] = [(v, i) for i, q in enumerate(qs) for v in q.forms]
        pool += [(v, None) for v in (*factors, *term.others)]
        derived = _derive(term.value, pool, used)
        if derived is not None:
            used.update({i: used.get(i, False) for i in derived if i is not None})
        elif (exact := _unrounded(term, pool)) is not None:
            swaps[term] = exact
            notes.append(("rounded-number", f"{where} writes {term.text} for {show(exact)}"))
        else:
            unmatched.append(term)
    # Only numbers in digits: "one" is as often an article ("one pair's price") as an amount; and a number
    # the equation's total restates ("has 3 years left") is the result, not a part of it.
    results = {equation.total, *(equation.total / f for f in factors)}
    unused = [
        q for i, q in enumerate(qs) if i not in used and q.text[:1].isdigit() and q.value not in results
    ]
    if unmatched:
        # An invented number most likely stands for the stated number(s) it left unused: 84 for 8 x $4.
        plain = [q for q in unused if q.kind == "number"]
        for term in unmatched:
            msg = f"{where} writes {term.text}, which the sentence neither states nor implies"
            if len(unmatched) == 1 and len(plain) in (1, 2):
                swaps[term] = math.prod((q.value for q in plain), start=Fraction(1))
                msg += f" (read as {' x '.join(q.text for q in plain)})"
            notes.append(("unstated-number", msg))
        return tuple(notes), equation.with_terms(swaps) if all(t in swaps for t in unmatched) else None
    total = equation.with_terms(swaps)
    units = {qs[i].unit for i in used if qs[i].unit} if quantity == "others" else set()
    subtracts = any(t.negative for t in equation.terms)
    for q in unused:
        amount = q.kind == "percent" or q.dimension() == quantity or q.unit in units
        # A count taken away ("sold 45 of them") is only missing when nothing at all is subtracted.
        if not amount and not (q.deduction and not subtracts):
            continue
        sign = -1 if q.deduction else 1
        if q.kind == "percent":
            total *= 1 + sign * q.value / 100
        else:
            total += sign * _in_equation_units(q, qs, used, bare)
        what = f"{q.text}{'%' if q.kind == 'percent' else ''} in {q.clause!r}"
        notes.append(
            ("omitted-deduction" if q.deduction else "omitted-quantity", f"{where} leaves out {what}")
        )
    return tuple(notes), total


def _match(
    terms: list[Term], qs: list[Quantity], factors: set[Fraction]
) -> tuple[dict[int, bool], list[Term], list[Term]]:
    """Pair each equation number with the stated number it writes, as is or through a unit factor.

    Returns the quantities used (index -> written as stated), the bare unit factors (60, 100), and the
    numbers still to explain.
    """
    used: dict[int, bool] = {}
    bare: list[Term] = []
    pending: list[Term] = []
    for term in terms:
        as_is = partial(lambda t, q: t.value in q.forms, term)
        converted = partial(lambda t, q: any(t.value in (q.value * f, q.value / f) for f in factors), term)
        for test, fresh in ((as_is, True), (converted, True), (as_is, False), (converted, False)):
            i = _pick(qs, used, test, fresh, term.negative)
            if i is not None:
                used[i] = used.get(i, False) or test is as_is
                break
        else:
            (bare if term.value in factors else pending).append(term)
    return used, bare, pending


def _pick(
    qs: Sequence[Quantity],
    used: dict[int, bool],
    test: Callable[[Quantity], bool],
    fresh: bool,
    negative: bool,
) -> int | None:
    """A matching quantity: unclaimed first, a deduction for a subtracted term, digits before words.

    With ``fresh``, only a quantity no term has claimed yet.
    """
    matches = [i for i, q in enumerate(qs) if test(q) and not (fresh and i in used)]
    return min(
        matches,
        key=lambda i: (i in used, qs[i].deduction != negative, not qs[i].text[:1].isdigit()),
        default=None,
    )


def _derive(
    value: Fraction, pool: list[tuple[Fraction, int | None]], used: dict[int, bool]
) -> list[int | None] | None:
    """Two pool entries whose sum, difference, product or quotient is ``value`` (a precomputed subtotal),
    preferring stated numbers no term has used yet (90 minutes as 90/60, not 2.5 - 1)."""
    best: list[int | None] | None = None
    score = -1
    for a, i in pool:
        for b, j in pool:
            if value in (a + b, a - b, a * b) or (b and a / b == value):
                fresh = sum(k is not None and k not in used for k in (i, j))
                if fresh > score:
                    best, score = [i, j], fresh
    return best


def _unrounded(term: Term, pool: list[tuple[Fraction, int | None]]) -> Fraction | None:
    """The exact value a decimal with two or more places rounds, when the sentence implies one."""
    places = len(term.text.partition(".")[2])
    if places < 2:
        return None
    tolerance = Fraction(1, 2 * 10**places)
    values = {a for a, _ in pool} | {x for a, _ in pool for b, _ in pool for x in (a * b, a / b if b else a)}
    return next((x for x in sorted(values) if x != term.value and abs(x - term.value) <= tolerance), None)


def _in_equation_units(q: Quantity, qs: list[Quantity], used: dict[int, bool], bare: list[Term]) -> Fraction:
    """A left-out time amount in the unit the equation counts in: minutes when it multiplies hours by 60."""
    if q.unit not in numbers.MINUTES:
        return q.value
    units = {qs[i].unit for i in used if qs[i].unit in numbers.MINUTES}
    if len(units) == 1:
        unit = units.pop()
    elif units:
        unit = "minute" if any(t.value == 60 for t in bare) else "hour"
    else:
        unit = "hour" if re.search(r"\bmph\b|per hour|km/h", " ".join(x.clause for x in qs), re.I) else q.unit
    return q.value * numbers.MINUTES[q.unit] / numbers.MINUTES[unit]


def distributions(rows: Sequence[Row]) -> list[str]:
    """The file's counts next to the paper's appendix tables, plus the labels the equations give."""
    lines = ["distributions (this file / the paper's appendix tables):"]
    for column, (table, title, paper) in PAPER.items():
        counts = Counter(r.values.get(column, "") for r in rows)
        if column == "natural_language_coefficient":
            counts = Counter({k.upper(): v for k, v in counts.items()})
        cells = [f"{_FORMAT_NAMES.get(k, k)} {counts.get(k, 0)}/{n}" for k, n in paper.items()]
        cells += [f"{k or '(empty)'} {n}/0" for k, n in sorted(counts.items()) if k not in paper]
        differ = [k or "(empty)" for k in {**paper, **counts} if counts.get(k, 0) != paper.get(k, 0)]
        verdict = f"differs: {', '.join(differ)}" if differ else "matches"
        lines.append(f"  {table}, {title} ({verdict}): {', '.join(cells)}")
    computed = Counter(compare(r.scenario.total_a, r.scenario.total_b) for r in rows if r.scenario)
    lines.append(f"  labels the equations give: {', '.join(f'{y} {computed.get(y, 0)}' for y in LABELS)}")
    return lines


def report(path: Path, rows: Sequence[Row], findings: Sequence[Finding]) -> list[str]:
    """What the CLI prints for one file: the findings, a count by kind, and the distributions."""
    failing = len({(f.id, f.line) for f in findings if f.verification})
    lines = [str(f) for f in findings]
    kinds = Counter(f.kind for f in findings)
    by_kind = ", ".join(f"{k} {kinds[k]}" for k in (*VERIFICATION, *READING) if kinds[k])
    lines.append(
        f"{path}: {len(rows)} rows, {failing} fail verification, {len(findings)} finding(s)"
        + (f" ({by_kind})" if by_kind else "")
    )
    scenarios = [r.scenario for r in rows if r.scenario is not None]
    return lines + distributions(rows) + shortcut_lines(measure(scenarios), ORIGINAL)
