"""The JSON formats: the `answer` field of the last object that has one; its value read as one word."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

from . import one_word
from .bare import unfence
from .context import Context
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


def _answer_values(obj: object) -> Iterator[object]:
    """`answer` values of an object and of the objects nested in it, outermost last."""
    if isinstance(obj, dict):
        for value in obj.values():
            if isinstance(value, dict):
                yield from _answer_values(value)
        for key, value in obj.items():
            if str(key).strip().lower() in ANSWER_KEYS:
                yield value


def _objects(text: str) -> Iterator[dict]:
    """Every top-level JSON (or Python-literal) object in the text, in order."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            return
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj, end = _python_literal(text, start)
        if isinstance(obj, dict):
            yield obj
            position = end
        else:
            position = start + 1


def _python_literal(text: str, start: int) -> tuple[object, int]:
    """`{'answer': 'more'}` (single quotes) is still a readable answer; braces may occur inside strings."""
    for end in (m.end() for m in re.finditer(r"\}", text[start:])):
        try:
            value = ast.literal_eval(text[start : start + end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value, start + end
    return None, start + 1
