"""Python-literal dicts in a text (`{'answer': 'more'}`): what `ast.literal_eval` reads from each `{`.

Trying `literal_eval` on the text from a `{` to each `}` after it costs the cube of the answer's length.
This reader instead follows Python's tokens and the literals `literal_eval` accepts (strings, bytes,
numbers, `True`/`False`/`None`/`...`, `set()`, tuples, lists, sets, dicts, a sign, `a+bj`) with its own
stack (each open bracket's items follow reading/literal_brackets.py), finds where each bracket closes,
and remembers for every bracket it passes whether it closes into a literal, of what kind, and how deep.
What it accepts as a dict is then read by `literal_eval` itself (on that slice only), so a value is
always exactly Python's; what it refuses, Python refuses too: a syntax error, an unhashable key or set
member, or more than 200 nested brackets (Python's own limit).

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

from .literal_brackets import (
    ATOM,
    BINARY,
    DICT_VALUE,
    IMAG,
    OTHER,
    REAL,
    SET,
    START,
    UNARY,
    Closed,
    Failed,
    Frame,
    complete,
    constant,
    operand,
    sign,
    string,
)
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
        stack = [Frame("{", start)]
        i, spent, merging = start + 1, 0, False
        try:
            while stack:
                if i < end and text[i] in _TRIVIA_FIRST:
                    after, broke = self._skip(i, end)
                    merging = merging or broke
                    spent, i = spent + 1, after
                if i >= end:
                    raise Failed
                if merging:
                    merging = False
                    rejoined = self._rejoin(stack, i)
                    if rejoined is not None:
                        i = rejoined
                        continue
                after = self._step(stack, i, end)
                merging = text[after - 1] in "'\""
                spent, i = spent + after - i, after
        except Failed:
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

    def _rejoin(self, stack: list[Frame], i: int) -> int | None:
        """Where quotes or a comment make this read meet an earlier one in the same state, share its outcome
        (without this, every `{` inside a comment would read the whole text after it again)."""
        top = stack[-1]
        earlier = self._rejoins.setdefault((i, top.signature()), top.start)
        if earlier == top.start:
            return None
        closed = self._known[earlier]
        if closed is None:
            raise Failed
        self._close(stack, closed)
        return closed.end

    def _step(self, stack: list[Frame], i: int, end: int) -> int:
        """Read the token at ``i`` into the innermost open bracket; the index after it."""
        text, top = self.text, stack[-1]
        c = text[i]
        if c in _CLOSER:
            if top.state not in (START, UNARY, BINARY):
                raise Failed
            known = self._known.get(i, False)
            if known is None:
                raise Failed
            if c != "(" and top.state == START and top.kind == "{" and top.mode != DICT_VALUE:
                stack.append(Frame(c, i))
                raise _Abandoned  # a dict, list or set as a key or set member: unhashable
            if isinstance(known, Closed):
                top.levels = max(top.levels, known.levels + 1)
                operand(top, known.number, known.hashable)
                return known.end
            if c != "(" and top.state != START:
                raise Failed
            stack.append(Frame(c, i))
            return i + 1
        if c in ")]}":
            if top.state in (UNARY, BINARY) or (top.state == START and not top.closable):
                raise Failed
            if top.state != START:
                complete(top, c)
            if c != _CLOSER[top.kind]:
                raise Failed
            number, hashable = top.result()
            self._close(
                stack, Closed(i + 1, number, hashable, top.levels, top.kind == "{" and top.mode != SET)
            )
            return i + 1
        if c in ",:":
            if top.state in (START, UNARY, BINARY):
                raise Failed
            complete(top, c)
            return i + 1
        if c in "+-":
            sign(top)
            return i + 1
        if c in "'\"":
            return self._string(top, i, "", end)
        if c == "." and text.startswith("...", i):
            constant(top)
            return i + 3
        if c.isdigit() or c == ".":
            numeral = NUMBER.match(text, i, end)
            if numeral is None:
                raise Failed
            digits = numeral.group(1)
            if numeral.end() - i > FEWEST_LIMIT and digits and too_many_digits(digits):
                raise Failed
            operand(top, IMAG if numeral.group()[-1] in "jJ" else REAL, True)
            return numeral.end()
        name = NAME.match(text, i, end)
        if name is None:
            raise Failed
        word = name.group()
        after = name.end()
        if after < end and text[after] in "'\"" and word.isascii() and word.lower() in PREFIXES:
            return self._string(top, after, word.lower(), end)
        if word in ("True", "False", "None"):
            constant(top)
            return after
        if unicodedata.normalize("NFKC", word) == "set":
            return self._empty_set(stack, after, end)
        raise Failed

    def _close(self, stack: list[Frame], closed: Closed) -> None:
        """The innermost bracket closes as ``closed``; its value goes to the bracket around it."""
        top = stack.pop()
        self._known[top.start] = closed
        if stack:
            parent = stack[-1]
            parent.levels = max(parent.levels, closed.levels + 1)
            operand(parent, closed.number, closed.hashable)

    def _string(self, top: Frame, quote: int, prefix: str, end: int) -> int:
        text = self.text
        delimiter = text[quote] * 3 if text.startswith(text[quote] * 3, quote) else text[quote]
        body = STRING_BODY[delimiter].match(text, quote + len(delimiter), end)
        if body is None:
            unclosed = LINE_BODY[delimiter].match(text, quote + 1, end) if len(delimiter) == 1 else None
            self.read_chars += (unclosed.end() if unclosed else end) - quote  # how far it looked for the quote
            raise Failed
        if "f" in prefix:
            raise Failed
        is_bytes = "b" in prefix
        if not valid_contents(text, body.start(), body.end(), is_bytes, "r" in prefix):
            raise Failed
        string(top, is_bytes)
        return body.end()

    def _empty_set(self, stack: list[Frame], i: int, end: int) -> int:
        """`set()`: an empty set, and one more level of brackets."""
        text, top = self.text, stack[-1]
        i = self._skip(i, end)[0]
        if i >= end or text[i] != "(":
            raise Failed
        if top.state != START or (top.kind == "{" and top.mode != DICT_VALUE):
            raise Failed
        i = self._skip(i + 1, end)[0]
        if i >= end or text[i] != ")":
            raise Failed
        top.levels = max(top.levels, 2)
        top.state, top.number, top.hashable = ATOM, OTHER, False
        return i + 1
