"""What a project's own check (the pytest_mathcomp_check hook) may return for each failure it finds: a
line of text, or a Check that also gives the value it measured, so that the base's value can be set
beside it. A failed case is known only when the base fails the same check and its value is not much
better than the case's (verdict/standing.py): a check that got much worse is new."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .printable import printable


@dataclass(frozen=True)
class Check:
    """One failure of a project's own check, with the value it measured (``name`` matches it with the
    same check on the base's answers; the message when not given). ``measure`` recomputes the value from a
    case's scores and its neutral partner's: given it, a failure the base shares is new only when its value
    rose significantly over the base's, and by more than max_increase (scoring/own_paired.py); without it,
    when the value is more than max_increase above the base's."""

    message: str
    value: float | None = None
    name: str = ""
    measure: Callable[[Any, Any], float | None] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return self.name or self.message

    def __str__(self) -> str:
        return self.message


EXPECTED = "expected a list of failures, each a line of text or a mathcomp_tests.Check, or [] when the case passes"


def problem(returned: object) -> str | None:
    """What is wrong with what a pytest_mathcomp_check hook returned, as ``returned ...; expected ...``;
    None when it is a list (or tuple) of lines and Checks, or None."""
    if returned is None:
        return None
    if not isinstance(returned, (list, tuple)):
        return f"returned {_shown(returned)}; {EXPECTED}"
    for failure in returned:
        if isinstance(failure, Check):
            value = failure.value
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if value is not None and not (number and math.isfinite(value)):
                return (
                    f"returned Check({failure.key!r}) with value={_shown(value)}; expected a finite number, or "
                    "None for a check that measures no value"
                )
            if failure.measure is not None and not callable(failure.measure):
                return f"returned Check({failure.key!r}) with measure={_shown(failure.measure)}; expected a function"
            if not isinstance(failure.message, str):
                return f"returned a Check whose message is {_shown(failure.message)}; expected a line of text"
        elif not isinstance(failure, str):
            return f"returned a failure {_shown(failure)} in its list; {EXPECTED}"
    return None


def _shown(value: object) -> str:
    text = printable(repr(value))
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def values(found: Iterable[object]) -> dict[str, float]:
    """Check name -> value, for the failures that carry a value (plain lines carry none)."""
    return {f.key: float(f.value) for f in found if isinstance(f, Check) and f.value is not None}


def much_worse(
    now: Mapping[str, float],
    base: Mapping[str, float] | None,
    by: float,
    tests: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The checks whose value now is much worse than the base's: those with a paired test (``tests``, by
    name: scoring/own_paired.py) when it found a rise; the others when their value is more than ``by`` above
    the base's (checks the base has no value for are not compared)."""
    base, tests = base or {}, tests or {}
    return [
        name
        for name, value in now.items()
        if name in base and (bool(tests[name]["breach"]) if name in tests else value - base[name] > by)
    ]
