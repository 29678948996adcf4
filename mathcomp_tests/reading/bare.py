"""Answers that are only a label, an option letter, or both: `more`, `B`, `(B)`, `B) more`, `**more**`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..types import LABELS, Label
from .outcome import Reading

_SAME = ("same", "the same", "equally", "the same amount", "same amount")
_OPEN_FENCE = re.compile(r"```[a-zA-Z]*\s*")
_PREFIX = re.compile(
    r"^(?:(?:my|the)\s+)?(?:final\s+|correct\s+)?(?:answer|option|choice|label)\s*(?:is)?\s*[:=\-]?\s*",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"[*_`#>\"'“”‘’]")
_STRIP = " \t\r\n.,;:!?[]{}<>-"
_QUANTITY = r"(?:\s+(?:time|minutes|hours|days|money|dollars|effort|energy|items|units|in total|overall))?"
_LETTER_FIRST = re.compile(
    rf"^(?:option\s+)?\(?([a-z])\)?\s*(?:[.):\-]\s*)?(?:(less|more|equal){_QUANTITY})?$", re.IGNORECASE
)
_WORD_FIRST = re.compile(
    rf"^(less|more|equal){_QUANTITY}\s*(?:\(\s*([a-z])\s*\)|[\-:]\s*([a-z]))?$", re.IGNORECASE
)


def unfence(text: str) -> str:
    """Without the fence around a code block: a leading "```lang" and a trailing "```"."""
    s = text.strip()
    opened = _OPEN_FENCE.match(s)
    if opened is not None:
        s = s[opened.end() :]
    if s.endswith("```"):
        s = s[:-3]
    return s.strip()


def clean(text: str) -> str:
    """Without code fences, markdown emphasis, quotes, an "Answer:" prefix and outer punctuation."""
    s = _MARKUP.sub("", unfence(text)).strip(_STRIP)
    return _PREFIX.sub("", s).strip(_STRIP)


def read_bare(text: str, options: Mapping[str, Label]) -> Reading | None:
    """The label when ``text`` is nothing but an answer; None when it says anything more."""
    s = clean(text)
    if s.lower() in LABELS:
        return Reading(s.lower(), "label word")  # type: ignore[arg-type]
    if s.lower() in _SAME:
        return Reading("equal", "label word")
    match = _LETTER_FIRST.match(s)
    if match:
        return _letter(match.group(1), match.group(2), options)
    match = _WORD_FIRST.match(s)
    if match:
        letter = match.group(2) or match.group(3)
        if letter is None:
            return Reading(match.group(1).lower(), "label word")  # type: ignore[arg-type]
        return _letter(letter, match.group(1), options)
    return None


def _letter(letter: str, word: str | None, options: Mapping[str, Label]) -> Reading | None:
    by_letter = options.get(letter.lower())
    if by_letter is None:
        return None if word is None else Reading.invalid(f"option {letter.upper()} is not in the prompt")
    if word is None:
        return Reading(by_letter, "option letter")
    if word.lower() != by_letter:
        return Reading.invalid(
            f"letter {letter.upper()} is {by_letter} in the prompt but the word is {word.lower()}"
        )
    return Reading(by_letter, "option letter and word")
