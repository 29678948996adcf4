"""Exact evaluation of the arithmetic written in a scenario's equation columns."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any

from ..types import Label
from .quoting import quote, reason

_TIMES = re.compile(r"(?<=[\d)])\s*[x×·X]\s*(?=[\d(])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_IMPLICIT = re.compile(r"(?<=[\d)])\s*(?=\()")
_ALLOWED = re.compile(r"^[0-9.+\-*/() ]+$")
MAX_LENGTH = 1000
"""The longest equation accepted, in characters: MathComp's longest has 54, and sympy's parser recurses once
per term, so 20,000 terms would end in a RecursionError."""


class EquationError(ValueError):
    """An equation that is not plain arithmetic, or whose stated result is wrong."""


def normalise(text: str) -> str:
    """Rewrite the spellings found in MathComp-style data as plain Python arithmetic.

    ``×``/``x`` become ``*``, ``2(3+1)`` is a product, ``$`` and thousands commas go, ``20%`` is ``(20/100)``.
    """
    s = text.strip().replace("$", "").replace("−", "-").replace("÷", "/")
    s = _THOUSANDS.sub("", s)
    s = _PERCENT.sub(r"(\1/100)", s)
    s = _TIMES.sub("*", s)
    s = s.replace("×", "*")
    return _IMPLICIT.sub("*", s)


@lru_cache(maxsize=1 << 14)
def evaluate(text: str) -> Fraction:
    """The exact value of an equation such as ``(3×2) + 5 - 10/2`` or ``8 + 8/2 = 12``.

    Decimals are read as exact rationals (``0.1`` is 1/10). A trailing ``= value`` must agree. Kept per
    equation (a value is immutable, an error is not kept): a generated row is verified as it is made and
    again as its file is read, and sympy's parser takes a millisecond an equation.
    """
    import sympy
    from sympy.parsing.sympy_parser import parse_expr, rationalize, standard_transformations

    if len(text) > MAX_LENGTH:
        raise EquationError(
            f"the equation has {len(text)} characters; expected at most {MAX_LENGTH} characters"
        )
    sides = normalise(text).split("=")
    if not text.strip() or len(sides) > 2:
        raise EquationError(f"expected arithmetic like '3 + (2×4)', got {quote(text)}")
    values = []
    for side in sides:
        side = side.strip()
        if not side or not _ALLOWED.match(side) or "**" in side:
            raise EquationError(f"expected digits, + - × / and parentheses, got {quote(text)}")
        try:
            expr = parse_expr(side, global_dict=_names(), transformations=(*standard_transformations, rationalize))
        except (SyntaxError, TypeError, ValueError, RecursionError, sympy.SympifyError) as exc:
            raise EquationError(f"cannot parse {quote(text)}: {reason(exc)}") from exc
        if expr.has(sympy.zoo, sympy.nan) or not expr.is_Rational:
            raise EquationError(f"{quote(text)} does not evaluate to a finite rational number")
        values.append(Fraction(int(expr.p), int(expr.q)))
    if len(values) == 2 and values[0] != values[1]:
        raise EquationError(f"{quote(text)}: left side is {values[0]}, not {values[1]}")
    return values[0]


@cache
def _names() -> dict[str, Any]:
    """The names parse_expr evaluates in, as it builds them when given none (sympy's, the builtin functions,
    and Max and Min as max and min): built once here, not on every call (a `from sympy import *` each)."""
    import builtins
    import types

    import sympy

    names: dict[str, Any] = {}
    exec("from sympy import *", names)
    names.update({n: o for n, o in vars(builtins).items() if isinstance(o, types.BuiltinFunctionType)})
    names["max"], names["min"] = sympy.Max, sympy.Min
    return names


def compare(total_a: Fraction, total_b: Fraction) -> Label:
    """The gold label: B's total compared with A's."""
    if total_b > total_a:
        return "more"
    if total_b < total_a:
        return "less"
    return "equal"


def show(value: Fraction) -> str:
    """A total for error messages: an integer, a short decimal, or a fraction."""
    if value.denominator == 1:
        return str(value.numerator)
    decimal = value.numerator / value.denominator
    return f"{value} (~{decimal:.4g})"
