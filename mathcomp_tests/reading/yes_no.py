"""Read a yes/no answer (dual-direction's one-direction questions)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FINAL = re.compile(r"\banswer\s*(?:is)?\s*[:\-]?\s*[*\"']*\s*(yes|no)\b", re.IGNORECASE)
_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class YesNo:
    value: bool | None
    rule: str


def read(text: str) -> YesNo:
    """`Answer: yes` (the last such line) wins; else a reply that says only yes or only no."""
    finals = _FINAL.findall(text)
    if finals:
        return YesNo(finals[-1].lower() == "yes", "answer line")
    words = {w.lower() for w in _WORD.findall(text)}
    if len(words) == 1:
        return YesNo(words.pop() == "yes", "only word")
    if not words:
        return YesNo(None, "invalid: no yes or no")
    return YesNo(None, "invalid: both yes and no, no answer line")
