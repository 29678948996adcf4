"""Read each person's total from an answer that lists them as `<name>: <number>` lines.

Numbers are read exactly (sympy Rationals): `12`, `-3.5`, `1,250`, `$40`, `7/2`, `12 hours`. The last
line naming a person wins (a model that corrects itself ends with its final totals). A person with no
readable total leaves the answer unread; it is never guessed. A reply cut at its token budget ends in an
unfinished line (SmolLM2 repeats its two lines until the budget cuts `PERSON_A: 14` to `PERSON_A: 1`):
that line is never read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sympy loads with the first total read, not with the plugin (a quarter second a run)
    import sympy

_NUMBER = r"([-+]?\s*\$?\s*\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)?)"


@dataclass(frozen=True)
class Totals:
    a: sympy.Rational | None
    b: sympy.Rational | None
    rule: str
    """`totals` when both were read, else `invalid: ...` naming who had no readable total."""
    cut: bool = False
    """The reply was cut at its token budget: its unfinished last line was not read."""

    @property
    def read(self) -> bool:
        return self.a is not None and self.b is not None


def number(text: str) -> sympy.Rational | None:
    """An exact rational from a written number, or None when it is not one."""
    import sympy

    cleaned = re.sub(r"[\s$,]", "", text)
    try:
        value = sympy.Rational(cleaned)
    except (TypeError, ValueError, ZeroDivisionError, sympy.SympifyError):
        return None
    return value if value.is_finite else None


def _last_total(text: str, name: str) -> sympy.Rational | None:
    pattern = re.compile(
        rf"(?<![\w]){re.escape(name)}(?:'s)?(?:\s+total)?\s*(?:\*\*)?\s*[:=]\s*(?:\*\*)?\s*{_NUMBER}",
        re.IGNORECASE,
    )
    found = [number(m.group(1)) for m in pattern.finditer(text)]
    found = [f for f in found if f is not None]
    return found[-1] if found else None


def finished(text: str, cut: bool) -> str:
    """``text`` without its unfinished last line when the reply was ``cut`` at its token budget."""
    if not cut or text.endswith("\n"):
        return text
    return text.rpartition("\n")[0]


def read(text: str, person_a: str, person_b: str, cut: bool = False) -> Totals:
    """Both persons' totals from ``text``, by the names the question gave them (``cut``: see ``finished``)."""
    kept = finished(text, cut)
    a, b = _last_total(kept, person_a), _last_total(kept, person_b)
    missing = [name for name, value in ((person_a, a), (person_b, b)) if value is None]
    if missing:
        why = " (cut at the token budget)" if cut else ""
        return Totals(a, b, f"invalid: no total for {' and '.join(missing)}{why}", cut)
    return Totals(a, b, "totals", cut)


def compare(totals: Totals) -> str | None:
    """B's total against A's, decided by sympy: more, less or equal (None when a total is missing)."""
    if totals.a is None or totals.b is None:
        return None
    import sympy

    if sympy.Gt(totals.b, totals.a) == sympy.true:
        return "more"
    if sympy.Lt(totals.b, totals.a) == sympy.true:
        return "less"
    return "equal"


def show(value: sympy.Rational) -> str:
    """A total as the locked-totals recap writes it: an integer, a decimal, or p/q."""
    import sympy

    if value.q == 1:
        return str(value.p)
    decimal = float(value)
    return f"{decimal:g}" if sympy.Rational(repr(decimal)) == value else f"{value.p}/{value.q}"
