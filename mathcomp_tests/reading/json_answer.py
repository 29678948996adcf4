"""The JSON formats: the `answer` field of the last object that has one; its value read as one word."""

from __future__ import annotations

from . import one_word
from .bare import unfence
from .context import Context
from .objects import objects as _objects
from .outcome import Reading

ANSWER_KEYS = ("answer", "final_answer", "final answer")


def read(text: str, context: Context) -> Reading:
    """`{"answer": "more"}`, with fences or prose around it; earlier objects without `answer` are skipped."""
    objects = list(_objects(unfence(text)))
    answered = [value for obj in objects for value in _answer_values(obj)]
    if not answered:
        return Reading.invalid("no JSON object with an answer field" if objects else "no JSON object")
    value = answered[-1]
    if not isinstance(value, str):
        return Reading.invalid(f"the answer field is {type(value).__name__}, not text")
    reading = one_word.read(value, context)
    if reading.label is None:
        return reading
    return Reading(reading.label, f"json answer field: {reading.rule}")


def _answer_values(obj: dict) -> list[object]:
    """`answer` values of an object and of the objects nested in it, outermost last (without recursion:
    an answer may nest deeper than Python's stack)."""
    found: list[object] = []
    stack = [(obj, iter(obj.values()))]
    while stack:
        current, values = stack[-1]
        for value in values:
            if isinstance(value, dict):
                stack.append((value, iter(value.values())))
                break
        else:
            stack.pop()
            found += [v for k, v in current.items() if isinstance(k, str) and k.strip().lower() in ANSWER_KEYS]
    return found
