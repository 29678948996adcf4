"""Read a model's answer into a label; anything unreadable is `invalid`, with the raw text kept."""

from __future__ import annotations

import ast
import json
import re

from ..types import LABELS, Label, Prediction, Response

OPTION_LETTERS: dict[str, Label] = {"a": "less", "b": "more", "c": "equal"}

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_WORD = re.compile(r"\b(less|more|equal)\b", re.IGNORECASE)
_OPTION = re.compile(r"^\(?([abc])\)?[.):]?(?:\s+(.*))?$", re.IGNORECASE | re.DOTALL)
_PREFIX = re.compile(r"^(?:final\s+)?answer\s*(?:is)?\s*[:=-]?\s*", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor)\b|n't\b", re.IGNORECASE)
_STRIP = " \t\r\n\"'`*_.,;:!?[](){}<>"
_COT_FINAL = re.compile(
    r"(?:final answer|answer|conclusion)\s*(?:is|:)?\s*[:\-]?\s*\**\s*(?:\(?[abc]\)\s*)?\**\s*(less|more|equal)\b",
    re.IGNORECASE,
)


def parse(response: Response, format: str) -> Prediction:
    """The label a response gives under an answer format (`one-word`, `json`, `cot`, `cot-json`)."""
    if response.error is not None:
        return Prediction(None, "error", response.text)
    reader = _READERS.get(format)
    if reader is None:
        raise ValueError(f"unknown answer format {format!r}; expected one of {', '.join(_READERS)}")
    label = reader(response.text)
    return Prediction(label, "ok" if label else "invalid", response.text)


def read_word(text: str) -> Label | None:
    """A one-word answer: `more`, `More.`, `B) more`, `(B)`, `**equal**`, `Answer: less`, in a fence or not."""
    s = _PREFIX.sub("", _unfence(text)).strip(_STRIP)
    if not s:
        return None
    option = _OPTION.match(s)
    if option:
        letter = OPTION_LETTERS[option.group(1).lower()]
        rest = (option.group(2) or "").strip(_STRIP).lower()
        if not rest:
            return letter
        return letter if rest == letter else None
    words = {w.lower() for w in _WORD.findall(s)}
    if len(words) == 1 and len(s.split()) <= 4 and not _NEGATION.search(s):
        return words.pop()
    return None


def read_json(text: str) -> Label | None:
    """The `answer` field of the first JSON object in the text (code fences and prose around it allowed)."""
    obj = _first_object(_unfence(text))
    if obj is None:
        return None
    value = next((v for k, v in obj.items() if str(k).strip().lower() == "answer"), None)
    if not isinstance(value, str):
        return None
    s = value.strip(_STRIP).lower()
    if s in LABELS:
        return s
    return read_word(value)


def read_cot(text: str) -> Label | None:
    """Free-form reasoning: the last explicit "answer is X", else a last line that is itself an answer.

    A provisional rule reader: it never guesses from a label word buried in the reasoning.
    """
    finals = _COT_FINAL.findall(text)
    if finals:
        return finals[-1].lower()
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return read_word(lines[-1]) if lines else None


def _unfence(text: str) -> str:
    return _FENCE.sub("", text.strip()).strip()


def _first_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            obj = _python_literal(text[start:])
        if isinstance(obj, dict):
            return obj
    return None


def _python_literal(text: str) -> object:
    """`{'answer': 'more'}` (single quotes) is still a readable answer; braces may occur inside strings."""
    for end in (m.end() for m in re.finditer(r"\}", text)):
        try:
            value = ast.literal_eval(text[:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


_READERS = {"one-word": read_word, "json": read_json, "cot": read_cot, "cot-json": read_json}
