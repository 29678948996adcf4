"""JSON objects in a text: what `json.JSONDecoder().raw_decode(text, start)` reads at each `{`, in linear time.

Calling `raw_decode` at every `{` of an answer re-reads the same characters once per `{` that encloses them
(quadratic), and recurses once per level of nesting (a `RecursionError` past about a thousand). This reader
follows the same grammar (strict strings, `NaN`/`Infinity`, the C scanner's numbers) with its own stack, and
remembers the outcome for every `{` it passes: an object that closes is kept with its value, and when a read
fails, every object still open fails with it (the same characters fail them in the same place). A later
start inside a string of an earlier read begins in the opposite string state and never meets that read's
objects again, so each character is read at most twice in all.
"""

from __future__ import annotations

import json
import math
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, but not in typeshed

_WS = " \t\n\r"
_SKIP_WS = re.compile(r"[ \t\n\r]*")
_OPENING = re.compile(r'\{[ \t\n\r]*+(?:\}|"[^"\\\x00-\x1f]*+(?:\\.[^"\\\x00-\x1f]*+)*+"[ \t\n\r]*+:)')
"""How every JSON object starts: `{}` or `{"key":` (a cheap test that spares a read at most `{` of prose)."""
_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_CONSTANTS: tuple[tuple[str, object], ...] = (
    ("null", None),
    ("true", True),
    ("false", False),
    ("NaN", math.nan),
    ("Infinity", math.inf),
    ("-Infinity", -math.inf),
)

_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _AFTER_VALUE = range(5)
Found = tuple[dict, int]
"""An object and the index just after its closing brace."""
_UNREAD = object()


class _Failed(Exception):
    """The text stops being JSON here: every object still open fails."""

    def __init__(self, read_to: int | None = None) -> None:
        super().__init__()
        self.read_to = read_to
        """How far the failing token was read, where that is past its start."""


class JsonObjects:
    """The object `raw_decode` reads at each `{` of one text; each `{` is decided once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.read_chars = 0
        """Characters read so far, counting each read of one again."""
        self._known: dict[int, Found | None] = {}

    def at(self, start: int) -> Found | None:
        """The object starting at ``text[start] == "{"`` and where it ends, or None where JSON fails."""
        if start not in self._known:
            if _OPENING.match(self.text, start) is None:
                self._known[start] = None
            else:
                self._read(start)
        return self._known[start]

    def _read(self, start: int) -> None:
        text, known = self.text, self._known
        end = len(text)
        stack: list[tuple[dict | list, int]] = []
        keys: list[str] = []
        i, state = start, _VALUE
        try:
            while True:
                if i < end and text[i] in _WS:
                    i = _SKIP_WS.match(text, i).end()  # type: ignore[union-attr]
                c = text[i] if i < end else ""
                if state == _AFTER_VALUE:
                    container = stack[-1][0]
                    if c == ",":
                        state = _KEY if isinstance(container, dict) else _VALUE
                        i += 1
                        continue
                    if c != ("}" if isinstance(container, dict) else "]"):
                        raise _Failed
                elif state in (_KEY, _KEY_OR_CLOSE):
                    if c == '"':
                        key, i = _string(text, i + 1)
                        i = _SKIP_WS.match(text, i).end()  # type: ignore[union-attr]
                        if i >= end or text[i] != ":":
                            raise _Failed
                        keys.append(key)
                        i, state = i + 1, _VALUE
                        continue
                    if c != "}" or state == _KEY:
                        raise _Failed
                elif c == "]" and state == _VALUE_OR_CLOSE:
                    pass
                else:
                    if c == "{":
                        seen = known.get(i) if i != start and i in known else _UNREAD
                        if seen is None:
                            raise _Failed
                        if seen is _UNREAD:
                            stack.append(({}, i))
                            i, state = i + 1, _KEY_OR_CLOSE
                            continue
                        value, i = seen  # type: ignore[misc]  # an object an earlier read closed
                    elif c == "[":
                        stack.append(([], i))
                        i, state = i + 1, _VALUE_OR_CLOSE
                        continue
                    else:
                        value, i = _scalar(text, i, c)
                    _put(stack, keys, value)
                    state = _AFTER_VALUE
                    continue
                container, opened = stack.pop()
                i += 1
                if isinstance(container, dict):
                    known[opened] = (container, i)
                if not stack:
                    return
                _put(stack, keys, container)
                state = _AFTER_VALUE
        except _Failed as failed:
            i = max(i, failed.read_to or i)
            for container, opened in stack:
                if isinstance(container, dict):
                    known[opened] = None
        finally:
            self.read_chars += i - start


def _put(stack: list[tuple[dict | list, int]], keys: list[str], value: object) -> None:
    container = stack[-1][0]
    if isinstance(container, dict):
        container[keys.pop()] = value
    else:
        container.append(value)


def _string(text: str, first: int) -> tuple[str, int]:
    try:
        return scanstring(text, first, True)
    except json.JSONDecodeError as error:
        unterminated = error.msg.startswith("Unterminated")
        raise _Failed(len(text) if unterminated else error.pos) from None


def _scalar(text: str, i: int, c: str) -> tuple[object, int]:
    if c == '"':
        return _string(text, i + 1)
    for word, value in _CONSTANTS:
        if c == word[0] and text.startswith(word, i):
            return value, i + len(word)
    number = _NUMBER.match(text, i)
    if number is None:
        raise _Failed
    whole, fraction, exponent = number.groups()
    try:
        value = float(number.group()) if fraction or exponent else int(whole)
    except ValueError:  # more digits than int() converts
        raise _Failed from None
    return value, number.end()
