"""One open bracket of a Python literal as `ast.literal_eval` reads it (reading/literal_scan.py scans the text).

A bracket's current item is a number it may sign or add to (`-1`, `1+2j`), a string (adjacent ones
joined, never bytes with text), a constant, or a closed bracket; its items say whether it is a tuple,
list, set or dict, whether it is hashable (a dict key, a set member), and how deep it nests. What
`literal_eval` refuses raises ``Failed``: the text stops being a literal there.
"""

from __future__ import annotations

from typing import NamedTuple

# What an expression is so far, as far as literal_eval cares: a number it may sign or add, or anything else.
REAL, IMAG, SIGNED_REAL, SIGNED_IMAG, SUM, OTHER = range(6)
# Where the current item of a bracket stands.
START, UNARY, BINARY, STRING, ATOM = range(5)
# What a `{` has turned out to be.
UNDECIDED, DICT_KEY, DICT_VALUE, SET = range(4)


class Closed(NamedTuple):
    """A bracket that closes into a literal: where it ends, what it is, and how many levels it nests."""

    end: int
    number: int
    hashable: bool
    levels: int
    is_dict: bool


class Frame:
    """A bracket still open: its kind, where it starts, and where its current item stands."""

    __slots__ = (
        "kind", "start", "mode", "state", "number", "hashable", "is_bytes", "closable", "items", "commas",
        "all_hashable", "levels",
    )  # fmt: skip

    def __init__(self, kind: str, start: int) -> None:
        self.kind, self.start = kind, start
        self.mode = UNDECIDED
        self.state, self.closable = START, True
        self.number, self.hashable, self.is_bytes = OTHER, True, False
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
            return OTHER, self.all_hashable
        return OTHER, False


class Failed(Exception):
    """The text stops being a literal here: every bracket still open fails."""


def constant(top: Frame) -> None:
    """`True`, `False`, `None` or `...`: an item of its own, never signed."""
    if top.state != START:
        raise Failed
    top.state, top.number, top.hashable = ATOM, OTHER, True


def operand(top: Frame, number: int, hashable: bool) -> None:
    """A finished atom (a number, or a closed bracket) where the innermost bracket expects one."""
    if top.state == START:
        top.state, top.number, top.hashable = ATOM, number, hashable
    elif top.state == UNARY and number in (REAL, IMAG):
        top.state, top.number, top.hashable = ATOM, SIGNED_REAL if number == REAL else SIGNED_IMAG, True
    elif top.state == BINARY and number == IMAG:
        top.state, top.number, top.hashable = ATOM, SUM, True
    else:
        raise Failed


def complete(top: Frame, separator: str) -> None:
    """The current item ends at ``separator`` (`,`, `:` or a closing bracket)."""
    number, hashable = (OTHER, True) if top.state == STRING else (top.number, top.hashable)
    if top.kind != "{":
        if separator == ":":
            raise Failed
        top.items += 1
        top.number, top.hashable = number, hashable
        top.all_hashable = top.all_hashable and hashable
        if separator == ",":
            top.commas += 1
    elif top.mode == DICT_VALUE:
        if separator == ":":
            raise Failed
        top.mode = DICT_KEY
    elif separator == ":":
        if top.mode == SET or not hashable:
            raise Failed
        top.mode = DICT_VALUE
    elif top.mode == DICT_KEY or not hashable:
        raise Failed
    else:
        top.mode = SET
    top.state, top.closable = START, separator != ":"


def sign(top: Frame) -> None:
    """A `+` or `-`: a unary sign where an item starts, or the `+`/`-` of `a+bj` after a real number."""
    if top.state == START:
        top.state = UNARY
    elif top.state == ATOM and top.number in (REAL, SIGNED_REAL):
        top.state = BINARY
    else:
        raise Failed


def string(top: Frame, is_bytes: bool) -> None:
    """A string (bytes where ``is_bytes``): an item, or joined to the string before it, of the same kind."""
    if top.state == START:
        top.state, top.is_bytes = STRING, is_bytes
    elif top.state != STRING or top.is_bytes != is_bytes:
        raise Failed
