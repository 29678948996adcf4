"""One rule for every number a user gives (an option, a thresholds key, a config key, a variable): it is
a finite number inside its range. NaN compares false with everything, so a range check alone lets it
through; and summary.json must stay JSON, which has no NaN or infinity."""

from __future__ import annotations

import math
from typing import Any


def expected(
    low: float | None = None, high: float | None = None, above: bool = False, integer: bool = False
) -> str:
    """The accepted range in words: "a number between 0 and 1", "a whole number at least 0", ..."""
    kind = "a whole number" if integer else "a number"
    if low is not None and high is not None:
        return f"{kind} between {low:g} and {high:g}"
    if low is not None:
        return f"{kind} {'above' if above else 'at least'} {low:g}"
    if high is not None:
        return f"{kind} at most {high:g}"
    return kind


def problem(
    value: Any,
    low: float | None = None,
    high: float | None = None,
    above: bool = False,
    integer: bool = False,
) -> str | None:
    """None when ``value`` is a finite number in range (above ``low`` when ``above``); else what was
    expected, as text for the caller's one-line error (which names the option, file, key or variable)."""
    wanted = expected(low, high, above, integer)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"expected {wanted}"
    if not math.isfinite(value):
        return f"not a finite number; expected {wanted}"
    if integer and not float(value).is_integer():
        return f"expected {wanted}"
    if low is not None and (value <= low if above else value < low):
        return f"expected {wanted}"
    if high is not None and value > high:
        return f"expected {wanted}"
    return None


def parse(text: str, low: float | None = None, high: float | None = None, above: bool = False) -> float | str:
    """A number read from text (an environment variable): the float, or the problem as text."""
    try:
        value = float(text)
    except ValueError:
        return f"expected {expected(low, high, above)}"
    found = problem(value, low, high, above)
    return value if found is None else found


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float (nested in dicts, lists, tuples) replaced by None, so
    ``json.dumps(..., allow_nan=False)`` holds: a number nothing could compute is null, never NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value
