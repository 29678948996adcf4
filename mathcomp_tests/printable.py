"""Text from the user or a file, made safe to print on a terminal: a model name is shown as given, except
that control characters (an ANSI escape that recolours or clears the screen, a carriage return that
overwrites the line, a NUL) are written as escapes (``\\x1b``) instead of reaching the terminal raw."""

from __future__ import annotations

import unicodedata


def printable(text: str) -> str:
    """``text`` with every control or format character (Unicode category C*) escaped, the rest as is."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def control_characters(text: str) -> list[str]:
    """The control characters in ``text`` (tab and the others that ``str.isprintable`` refuses), escaped."""
    return [_escape(ch) for ch in dict.fromkeys(text) if unicodedata.category(ch).startswith("C")]


def _escape(ch: str) -> str:
    return ascii(ch)[1:-1]
