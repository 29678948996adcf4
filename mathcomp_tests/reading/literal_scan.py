"""Python-literal dicts in a text (`{'answer': 'more'}`): what `ast.literal_eval` reads from each `{`.

Trying `literal_eval` on the text from a `{` to each `}` after it costs the cube of the answer's length.
This reader instead follows Python's tokens and the literals `literal_eval` accepts (strings, bytes,
numbers, `True`/`False`/`None`/`...`, `set()`, tuples, lists, sets, dicts, a sign, `a+bj`) with its own
stack, finds where each bracket closes, and remembers for every bracket it passes whether it closes
into a literal, of what kind, and how deep. What it accepts as a dict is then read by `literal_eval`
itself (on that slice only), so a value is always exactly Python's; what it refuses, Python refuses too:
a syntax error, an unhashable key or set member, or more than 200 nested brackets (Python's own limit).

A read that fails fails every bracket still open, and a bracket once decided is never read again. A
`{` inside a string or comment of an earlier read starts its own read; where the two meet again in the
same state (after a string, a line break or a comment) the later one takes the earlier one's outcome.
Measured on crafted quote and comment runs, that keeps the reading under five characters per character.
As a backstop, after `BUDGET_PER_CHAR` characters read per character of text (plus `BUDGET_BASE`), no
further `{` is read as a Python literal: no realistic answer comes near it, so readings do not change.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from bisect import bisect_left
from typing import NamedTuple

from .literal_tokens import (
    FEWEST_LIMIT,
    LINE_BODY,
    NAME,
    NUMBER,
    PREFIXES,
    STRING_BODY,
    too_many_digits,
    valid_contents,
)

BUDGET_PER_CHAR = 8
BUDGET_BASE = 1 << 16
MAX_LEVELS = 200
"""Brackets open at once that Python's tokenizer accepts ("too many nested parentheses" past it)."""

_TRIVIA_FIRST = frozenset(" \t\f\r\n#\\")
_SPACE = re.compile(r"[ \t\f\r\n]*")
_LINE_BREAK = re.compile(r"[\r\n]")
_POISON = re.compile(r"[\x00\ud800-\udfff]")
"""Characters that make `compile` refuse the whole slice: NUL, and lone surrogates (not UTF-8)."""
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_NO_DICT = re.compile(
    r"""\{[ \t\n\r\f]*(?:'[^'\\\r\n]*+(?:\\.[^'\\\r\n]*+)*+'|"[^"\\\r\n]*+(?:\\.[^"\\\r\n]*+)*+")"""
    r"""[ \t\n\r\f]*+[^:'"#\\a-zA-Z\s]"""
)
"""A `{` whose first member is one quoted string followed by neither `:` nor anything that could lead to
one (another string, a comment, a line break): no dict. A cheap test that spares a read at most `{"` and
`{'` of prose."""

# What an expression is so far, as far as literal_eval cares: a number it may sign or add, or anything else.
_REAL, _IMAG, _SIGNED_REAL, _SIGNED_IMAG, _SUM, _OTHER = range(6)
# Where the current item of a bracket stands.
_START, _UNARY, _BINARY, _STRING, _ATOM = range(5)
# What a `{` has turned out to be.
_UNDECIDED, _DICT_KEY, _DICT_VALUE, _SET = range(4)


class Closed(NamedTuple):
    """A bracket that closes into a literal: where it ends, what it is, and how many levels it nests."""

    end: int
    number: int
    hashable: bool
    levels: int
    is_dict: bool


class _Frame:
    __slots__ = (
        "kind", "start", "mode", "state", "number", "hashable", "is_bytes", "closable", "items", "commas",
        "all_hashable", "levels",
    )  # fmt: skip

    def __init__(self, kind: str, start: int) -> None:
        self.kind, self.start = kind, start
        self.mode = _UNDECIDED
        self.state, self.closable = _START, True
        self.number, self.hashable, self.is_bytes = _OTHER, True, False
        self.items = self.commas = 0
        self.all_hashable = True
        self.levels = 1

    def signature(self) -> tuple[object, ...]:
        """Everything that decides how this bracket goes on from here."""
        return (
            self.kind, self.mode, self.state, self.number, self.hashable, self.is_bytes, self.closable,
            min(self.items, 2), min(self.commas, 1), self.all_hashable, self.levels,
        )  # fmt: skip

    def result(self) -> tuple[int, bool]:
        if self.kind == "(":
            if self.items == 1 and self.commas == 0:
                return self.number, self.hashable
            return _OTHER, self.all_hashable
        return _OTHER, False


class _Failed(Exception):
    """The text stops being a literal here: every bracket still open fails."""


class _Abandoned(Exception):
    """Every bracket still open will fail; the one just opened is left for its own read."""


class PyLiterals:
    """The dict `ast.literal_eval` reads at each `{` of one text; each bracket is decided once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._known: dict[int, Closed | None] = {}
        """Each bracket a read has passed: how it closed, or None where the text stopped being a literal."""
        self._refused: set[int] = set()
        """Dicts the scanner accepted and `literal_eval` did not (an escape Python only warns about, made an
        error by the warning filters; a stack too deep for the caller)."""
        self._poison = [m.start() for m in _POISON.finditer(text)]
        self.read_chars = 0
        """Characters the scanner has read so far, counting each read of one again."""
        self.evaluated_chars = 0
        """Characters given to `literal_eval` so far."""
        self._budget = BUDGET_PER_CHAR * len(text) + BUDGET_BASE
        self._breaks: list[int] | None = None
        self._rejoins: dict[tuple[object, ...], int] = {}
        """(position, signature) -> where the bracket starts that an earlier read had open there, so."""

    def at(self, start: int) -> tuple[dict, int] | None:
        """The dict starting at ``text[start] == "{"`` and the index after it, or None where there is none."""
        end = self.dict_end(start)
        if end is None or start in self._refused:
            return None
        self.evaluated_chars += end - start
        try:
            value = ast.literal_eval(self.text[start:end])
        except Exception:  # noqa: BLE001 - whatever literal_eval refuses is simply not a literal
            value = None
        if not isinstance(value, dict):
            self._refused.add(start)
            return None
        return value, end

    def dict_end(self, start: int) -> int | None:
        """Where the dict display starting at ``text[start] == "{"`` ends, if `literal_eval` reads it."""
        if start not in self._known:
            if self.read_chars + self.evaluated_chars >= self._budget:
                return None
            if _NO_DICT.match(self.text, start):
                self._known[start] = None
                return None
            self._read(start)
        closed = self._known.get(start)
        if closed is None or not closed.is_dict or closed.levels > MAX_LEVELS:
            return None
        return closed.end

    def _limit(self, start: int) -> int:
        """Where reading from ``start`` must stop: the first character `compile` refuses outright."""
        i = bisect_left(self._poison, start)
        return self._poison[i] if i < len(self._poison) else len(self.text)

    def _read(self, start: int) -> None:
        text, end = self.text, self._limit(start)
        stack = [_Frame("{", start)]
        i, spent, merging = start + 1, 0, False
        try:
            while stack:
                if i < end and text[i] in _TRIVIA_FIRST:
                    after, broke = self._skip(i, end)
                    merging = merging or broke
                    spent, i = spent + 1, after
                if i >= end:
                    raise _Failed
                if merging:
                    merging = False
                    rejoined = self._rejoin(stack, i)
                    if rejoined is not None:
                        i = rejoined
                        continue
                after = self._step(stack, i, end)
                merging = text[after - 1] in "'\""
                spent, i = spent + after - i, after
        except _Failed:
            for frame in stack:
                self._known[frame.start] = None
        except _Abandoned:
            for frame in stack[:-1]:
                self._known[frame.start] = None
        finally:
            self.read_chars += spent

    def _skip(self, i: int, end: int) -> tuple[int, bool]:
        """Past the white space, comments and line continuations at ``i``; and whether they held a line
        break or a comment (where reads that began apart can meet)."""
        text, broke = self.text, False
        while i < end:
            c = text[i]
            if c in " \t\f\r\n":
                after = _SPACE.match(text, i, end).end()  # type: ignore[union-attr]
                broke = broke or _LINE_BREAK.search(text, i, after) is not None
                i = after
            elif c == "#":
                i, broke = min(self._line_end(i), end), True
            elif c == "\\" and text.startswith(("\n", "\r"), i + 1):
                i += 3 if text.startswith("\r\n", i + 1) else 2
            else:
                break
        return i, broke

    def _line_end(self, i: int) -> int:
        """The first line break at or after ``i`` (the end of a comment), found once for the whole text."""
        if self._breaks is None:
            self._breaks = [m.start() for m in _LINE_BREAK.finditer(self.text)]
        j = bisect_left(self._breaks, i)
        return self._breaks[j] if j < len(self._breaks) else len(self.text)

    def _rejoin(self, stack: list[_Frame], i: int) -> int | None:
        """Where quotes or a comment make this read meet an earlier one in the same state, share its outcome
        (without this, every `{` inside a comment would read the whole text after it again)."""
        top = stack[-1]
        earlier = self._rejoins.setdefault((i, top.signature()), top.start)
        if earlier == top.start:
            return None
        closed = self._known[earlier]
        if closed is None:
            raise _Failed
        self._close(stack, closed)
        return closed.end

    def _step(self, stack: list[_Frame], i: int, end: int) -> int:
        """Read the token at ``i`` into the innermost open bracket; the index after it."""
        text, top = self.text, stack[-1]
        c = text[i]
        if c in _CLOSER:
            if top.state not in (_START, _UNARY, _BINARY):
                raise _Failed
            known = self._known.get(i, False)
            if known is None:
                raise _Failed
            if c != "(" and top.state == _START and top.kind == "{" and top.mode != _DICT_VALUE:
                stack.append(_Frame(c, i))
                raise _Abandoned  # a dict, list or set as a key or set member: unhashable
            if isinstance(known, Closed):
                top.levels = max(top.levels, known.levels + 1)
                _operand(top, known.number, known.hashable)
                return known.end
            if c != "(" and top.state != _START:
                raise _Failed
            stack.append(_Frame(c, i))
            return i + 1
        if c in ")]}":
            if top.state in (_UNARY, _BINARY) or (top.state == _START and not top.closable):
                raise _Failed
            if top.state != _START:
                _complete(top, c)
            if c != _CLOSER[top.kind]:
                raise _Failed
            number, hashable = top.result()
            self._close(
                stack, Closed(i + 1, number, hashable, top.levels, top.kind == "{" and top.mode != _SET)
            )
            return i + 1
        if c in ",:":
            if top.state in (_START, _UNARY, _BINARY):
                raise _Failed
            _complete(top, c)
            return i + 1
        if c in "+-":
            if top.state == _START:
                top.state = _UNARY
            elif top.state == _ATOM and top.number in (_REAL, _SIGNED_REAL):
                top.state = _BINARY
            else:
                raise _Failed
            return i + 1
        if c in "'\"":
            return self._string(top, i, "", end)
        if c == "." and text.startswith("...", i):
            _constant(top)
            return i + 3
        if c.isdigit() or c == ".":
            numeral = NUMBER.match(text, i, end)
            if numeral is None:
                raise _Failed
            digits = numeral.group(1)
            if numeral.end() - i > FEWEST_LIMIT and digits and too_many_digits(digits):
                raise _Failed
            _operand(top, _IMAG if numeral.group()[-1] in "jJ" else _REAL, True)
            return numeral.end()
        name = NAME.match(text, i, end)
        if name is None:
            raise _Failed
        word = name.group()
        after = name.end()
        if after < end and text[after] in "'\"" and word.isascii() and word.lower() in PREFIXES:
            return self._string(top, after, word.lower(), end)
        if word in ("True", "False", "None"):
            _constant(top)
            return after
        if unicodedata.normalize("NFKC", word) == "set":
            return self._empty_set(stack, after, end)
        raise _Failed

    def _close(self, stack: list[_Frame], closed: Closed) -> None:
        """The innermost bracket closes as ``closed``; its value goes to the bracket around it."""
        top = stack.pop()
        self._known[top.start] = closed
        if stack:
            parent = stack[-1]
            parent.levels = max(parent.levels, closed.levels + 1)
            _operand(parent, closed.number, closed.hashable)

    def _string(self, top: _Frame, quote: int, prefix: str, end: int) -> int:
        text = self.text
        delimiter = text[quote] * 3 if text.startswith(text[quote] * 3, quote) else text[quote]
        body = STRING_BODY[delimiter].match(text, quote + len(delimiter), end)
        if body is None:
            unclosed = LINE_BODY[delimiter].match(text, quote + 1, end) if len(delimiter) == 1 else None
            self.read_chars += (unclosed.end() if unclosed else end) - quote  # how far it looked for the quote
            raise _Failed
        if "f" in prefix:
            raise _Failed
        is_bytes = "b" in prefix
        if not valid_contents(text, body.start(), body.end(), is_bytes, "r" in prefix):
            raise _Failed
        if top.state == _START:
            top.state, top.is_bytes = _STRING, is_bytes
        elif top.state != _STRING or top.is_bytes != is_bytes:
            raise _Failed
        return body.end()

    def _empty_set(self, stack: list[_Frame], i: int, end: int) -> int:
        """`set()`: an empty set, and one more level of brackets."""
        text, top = self.text, stack[-1]
        i = self._skip(i, end)[0]
        if i >= end or text[i] != "(":
            raise _Failed
        if top.state != _START or (top.kind == "{" and top.mode != _DICT_VALUE):
            raise _Failed
        i = self._skip(i + 1, end)[0]
        if i >= end or text[i] != ")":
            raise _Failed
        top.levels = max(top.levels, 2)
        top.state, top.number, top.hashable = _ATOM, _OTHER, False
        return i + 1


def _constant(top: _Frame) -> None:
    if top.state != _START:
        raise _Failed
    top.state, top.number, top.hashable = _ATOM, _OTHER, True


def _operand(top: _Frame, number: int, hashable: bool) -> None:
    """A finished atom (a number, or a closed bracket) where the innermost bracket expects one."""
    if top.state == _START:
        top.state, top.number, top.hashable = _ATOM, number, hashable
    elif top.state == _UNARY and number in (_REAL, _IMAG):
        top.state, top.number, top.hashable = _ATOM, _SIGNED_REAL if number == _REAL else _SIGNED_IMAG, True
    elif top.state == _BINARY and number == _IMAG:
        top.state, top.number, top.hashable = _ATOM, _SUM, True
    else:
        raise _Failed


def _complete(top: _Frame, separator: str) -> None:
    """The current item ends at ``separator`` (`,`, `:` or a closing bracket)."""
    number, hashable = (_OTHER, True) if top.state == _STRING else (top.number, top.hashable)
    if top.kind != "{":
        if separator == ":":
            raise _Failed
        top.items += 1
        top.number, top.hashable = number, hashable
        top.all_hashable = top.all_hashable and hashable
        if separator == ",":
            top.commas += 1
    elif top.mode == _DICT_VALUE:
        if separator == ":":
            raise _Failed
        top.mode = _DICT_KEY
    elif separator == ":":
        if top.mode == _SET or not hashable:
            raise _Failed
        top.mode = _DICT_VALUE
    elif top.mode == _DICT_KEY or not hashable:
        raise _Failed
    else:
        top.mode = _SET
    top.state, top.closable = _START, separator != ":"
