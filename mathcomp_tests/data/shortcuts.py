"""Surface shortcuts in a scenario set: how far a reader gets without doing the arithmetic.

A set that lets a reader skip steps manufactures directional bias: if "twice that" sits mostly in A's
sentence, a model that ignores it drifts towards "more" under every framing. ``measure`` computes, for
any list of verified scenarios: the naive-sum reader (add up the numerals of each sentence, ignore the
words) with its accuracy and DirErr per label; the largest-number rule (the side holding the largest
single numeral has the larger total); where derived steps sit (A vs B, per label); operators per equation;
amounts per sentence; percentages, decimals, deductions and "that" per side. ``breaches`` checks the
bounds docs/data.md states; the fixtures and the generator's output must keep them.
"""

from __future__ import annotations

import ast
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..types import LABELS, Label, Scenario
from . import numbers
from .equations import compare, normalise


@dataclass(frozen=True)
class Bounds:
    """What a shipped or generated set must keep (docs/data.md, "Balance bounds")."""

    naive_accuracy: float = 0.53
    naive_dir_err: float = 0.45
    naive_dir_err_spread: float = 0.12
    largest_accuracy: float = 0.44
    largest_agreement: float = 0.57
    derived_gap: float = 0.12
    that_gap: float = 0.15
    median_operators: float = 3.0
    amounts: tuple[int, int] = (2, 6)
    three_amounts_share: float = 0.60
    both_sides_share: float = 0.05


BOUNDS = Bounds()


@dataclass
class Figures:
    """The shortcut figures of one scenario set."""

    rows: int
    labels: dict[str, int]
    naive_accuracy: float
    naive_dir_err: dict[str, float]
    largest_accuracy: float
    largest_agreement: float
    """Among non-equal rows, the share where the side with the largest numeral has the larger total."""
    derived: dict[str, tuple[int, int]]
    """Per label: rows with a derived step (anything but a plain sum) in A's equation, in B's."""
    that: tuple[int, int]
    operators_median: float
    operators_max: int
    amounts_range: tuple[int, int]
    three_amounts_share: float
    per_side: dict[str, tuple[int, int]] = field(default_factory=dict)
    """percentages, decimals, deductions: rows where sentence 1 / sentence 2 has one."""


# The original MathComp CSV (Shafiei et al., CC BY 4.0) measured by ``measure``: its figures, none of its
# rows. tests/test_shortcuts.py recomputes them from the file when MATHCOMP_ORIGINAL names it.
ORIGINAL = Figures(
    rows=300,
    labels={"less": 119, "more": 87, "equal": 94},
    naive_accuracy=0.533,
    naive_dir_err={"less": 0.293, "more": 0.268, "equal": 0.146},
    largest_accuracy=0.437,
    largest_agreement=0.563,
    derived={"less": (113, 96), "more": (81, 70), "equal": (58, 44)},
    that=(89, 71),
    operators_median=3.0,
    operators_max=8,
    amounts_range=(2, 8),
    three_amounts_share=0.697,
    per_side={"percentages": (30, 20), "decimals": (27, 31), "deductions": (64, 42)},
)


def numerals(stated: Sequence[numbers.Quantity]) -> list[Fraction]:
    """The numbers a sentence writes in digits (not words, not percentages): what a naive reader adds."""
    return [q.value for q in stated if q.kind == "number" and q.text[:1].isdigit()]


def operators(expr: str) -> int:
    """Binary operators in an equation (``20%`` counts as the division it stands for)."""
    tree = ast.parse(normalise(expr).split("=")[0].strip(), mode="eval")
    return sum(isinstance(node, ast.BinOp) for node in ast.walk(tree))


def derived(expr: str) -> bool:
    """True when the equation does more than add stated amounts: a factor, a share, a deduction."""
    tree = ast.parse(normalise(expr).split("=")[0].strip(), mode="eval")
    return any(
        isinstance(n, ast.UnaryOp) or (isinstance(n, ast.BinOp) and not isinstance(n.op, ast.Add))
        for n in ast.walk(tree)
    )


def _dir_err(pairs: list[tuple[Label, Label]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for y in LABELS:
        others = [p for g, p in pairs if g != y]
        out[y] = round(sum(p == y for p in others) / max(1, len(others)), 3)
    return out


_THAT = re.compile(r"\bthat\b", re.I)
_DECIMAL = re.compile(r"\d\.\d")
_PERCENT = re.compile(r"\d\s?%|\bpercent\b", re.I)


def measure(scenarios: Sequence[Scenario]) -> Figures:
    """Every shortcut figure of ``scenarios`` (the stored label is the gold one)."""
    naive: list[tuple[Label, Label]] = []
    largest: list[tuple[Label, Label]] = []
    derived_by: dict[str, list[int]] = {y: [0, 0] for y in LABELS}
    ops: list[int] = []
    amounts: list[int] = []
    that = [0, 0]
    per_side = {k: [0, 0] for k in ("percentages", "decimals", "deductions")}
    for s in scenarios:
        nums_a, nums_b = numerals(numbers.stated(s.text_a)), numerals(numbers.stated(s.text_b))
        naive.append((s.label, compare(sum(nums_a, Fraction(0)), sum(nums_b, Fraction(0)))))
        largest.append((s.label, compare(max(nums_a, default=Fraction(0)), max(nums_b, default=Fraction(0)))))
        for side, (text, expr) in enumerate(((s.text_a, s.expr_a), (s.text_b, s.expr_b))):
            derived_by[s.label][side] += derived(expr)
            ops.append(operators(expr))
            amounts.append(len(numbers.stated(text)))
            that[side] += len(_THAT.findall(text))
            per_side["percentages"][side] += bool(_PERCENT.search(text))
            per_side["decimals"][side] += bool(_DECIMAL.search(text))
            per_side["deductions"][side] += "-" in normalise(expr)
    rows = len(scenarios)
    decided = [(g, p) for g, p in largest if g != "equal"]
    return Figures(
        rows=rows,
        labels={y: sum(s.label == y for s in scenarios) for y in LABELS},
        naive_accuracy=round(sum(g == p for g, p in naive) / max(1, rows), 3),
        naive_dir_err=_dir_err(naive),
        largest_accuracy=round(sum(g == p for g, p in largest) / max(1, rows), 3),
        largest_agreement=round(sum(g == p for g, p in decided) / max(1, len(decided)), 3),
        derived={y: (a, b) for y, (a, b) in derived_by.items()},
        that=(that[0], that[1]),
        operators_median=float(statistics.median(ops)) if ops else 0.0,
        operators_max=max(ops, default=0),
        amounts_range=(min(amounts, default=0), max(amounts, default=0)),
        three_amounts_share=round(Counter(amounts)[3] / max(1, len(amounts)), 3),
        per_side={k: (a, b) for k, (a, b) in per_side.items()},
    )


def breaches(f: Figures, bounds: Bounds = BOUNDS) -> list[str]:
    """Every bound ``f`` leaves, as a sentence naming the figure and its bound; empty when it keeps all."""
    out: list[str] = []

    def check(ok: bool, message: str) -> None:
        if not ok:
            out.append(message)

    check(
        f.naive_accuracy <= bounds.naive_accuracy,
        f"naive-sum accuracy {f.naive_accuracy} > {bounds.naive_accuracy}",
    )
    for y, v in f.naive_dir_err.items():
        check(v <= bounds.naive_dir_err, f"naive-sum DirErr({y}) {v} > {bounds.naive_dir_err}")
    spread = round(abs(f.naive_dir_err["more"] - f.naive_dir_err["less"]), 3)
    check(
        spread <= bounds.naive_dir_err_spread,
        f"naive-sum DirErr(more) and DirErr(less) differ by {spread} > {bounds.naive_dir_err_spread}",
    )
    check(
        f.largest_accuracy <= bounds.largest_accuracy,
        f"largest-number rule accuracy {f.largest_accuracy} > {bounds.largest_accuracy}",
    )
    check(
        f.largest_agreement <= bounds.largest_agreement,
        f"largest number on the larger side in {f.largest_agreement} of non-equal rows > {bounds.largest_agreement}",
    )
    for y, (a, b) in f.derived.items():
        n = f.labels[y]
        check(
            abs(a - b) <= bounds.derived_gap * n,
            f"derived steps in {y} rows: A {a}, B {b}, gap > {bounds.derived_gap} x {n} rows",
        )
    a, b = f.that
    check(abs(a - b) <= bounds.that_gap * max(a, b, 1), f"'that' in sentence 1 {a} vs sentence 2 {b}")
    check(
        f.operators_median >= bounds.median_operators,
        f"median operators per equation {f.operators_median} < {bounds.median_operators}",
    )
    lo, hi = bounds.amounts
    check(
        lo <= f.amounts_range[0] and f.amounts_range[1] <= hi,
        f"amounts per sentence range {f.amounts_range[0]}-{f.amounts_range[1]}, outside {lo}-{hi}",
    )
    check(
        f.three_amounts_share <= bounds.three_amounts_share,
        f"{f.three_amounts_share} of sentences list exactly three amounts > {bounds.three_amounts_share}",
    )
    for kind, (a, b) in f.per_side.items():
        need = bounds.both_sides_share * f.rows
        check(a >= need and b >= need, f"{kind} in sentence 1 {a}, sentence 2 {b}: each must reach {need:g}")
    return out


def _pair(values: tuple[int, int], sep: str = "/") -> str:
    return f"{values[0]}{sep}{values[1]}"


def lines(f: Figures, original: Figures | None = None) -> list[str]:
    """The report the audit prints: each figure, beside the original's when given."""

    def both(ours: object, theirs: object) -> str:
        return f"{ours}" if original is None else f"{ours} (original {theirs})"

    o = original or f
    out = ["shortcuts" + (" (this file, original MathComp in brackets):" if original else ":")]
    out.append(f"  naive-sum reader: accuracy {both(f.naive_accuracy, o.naive_accuracy)}")
    for y in LABELS:
        out.append(f"    DirErr({y}) {both(f.naive_dir_err[y], o.naive_dir_err[y])}")
    out.append(f"  largest-number rule: accuracy {both(f.largest_accuracy, o.largest_accuracy)}")
    out.append(
        "    larger side holds the largest numeral in "
        f"{both(f.largest_agreement, o.largest_agreement)} of non-equal rows"
    )
    for y in LABELS:
        out.append(f"  derived steps in {y} rows, A/B: {both(_pair(f.derived[y]), _pair(o.derived[y]))}")
    out.append(f"  'that' in sentence 1/2: {both(_pair(f.that), _pair(o.that))}")
    out.append(
        "  operators per equation: median "
        f"{both(f.operators_median, o.operators_median)}, max {both(f.operators_max, o.operators_max)}"
    )
    out.append(
        "  amounts per sentence: "
        f"{both(_pair(f.amounts_range, '-'), _pair(o.amounts_range, '-'))}, "
        f"exactly three in {both(f.three_amounts_share, o.three_amounts_share)}"
    )
    for kind in f.per_side:
        out.append(f"  {kind} in sentence 1/2: {both(_pair(f.per_side[kind]), _pair(o.per_side[kind]))}")
    problems = breaches(f)
    out.append("  balance bounds: " + ("kept" if not problems else "LEFT: " + "; ".join(problems)))
    return out
