"""How an error message shows a value it refuses: quoted, and cut short so that a huge field never floods it."""

from __future__ import annotations

LIMIT = 80


def quote(text: str, limit: int = LIMIT) -> str:
    """``repr(text)`` when short; else its start, an ellipsis and its length in characters."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def reason(exc: BaseException, limit: int = LIMIT) -> str:
    """The first line of an exception's message (its type when it has none), cut to ``limit`` characters."""
    first = (str(exc).splitlines() or [type(exc).__name__])[0]
    return first if len(first) <= limit else f"{first[:limit]}..."
