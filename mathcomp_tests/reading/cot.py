"""Free reasoning: the conclusion after the last "answer is" / "therefore" / "so", or a final sentence.

Only the conclusion is read; label words inside the reasoning are never taken.
"""

from __future__ import annotations

import re

from .bare import read_bare
from .clauses import read_clause, sentences
from .context import Context
from .outcome import Reading

_MARKER = re.compile(
    r"(?:\b(?:the\s+)?(?:final\s+|correct\s+)?(?:answer|option|choice)\s+(?:is|would be|will be)\b\s*:?"
    r"|\b(?:final\s+answer|final|answer|conclusion|result|verdict)\s*(?:\*+\s*)?[:=]"
    r"|\b(?:in conclusion|in summary|to summari[sz]e|therefore|thus|hence|consequently|overall|so)\b[,:]?)",
    re.IGNORECASE,
)


_OPTION_LINE = re.compile(r"^\W*\(?([a-z])\)\s*(less|more|equal)\W*$", re.IGNORECASE)

CLOSING = 2
"""Sentences at the end that may conclude without a marker ("Person B spends more."); earlier ones are
reasoning, read only when a marker ("therefore", "the answer is") says they conclude."""


def read(text: str, context: Context) -> Reading:
    if _ends_with_option_list(text):
        return Reading.invalid("it ends by repeating the option list, not by choosing one")
    found = conclusion(text, context)
    return found[1] if found is not None else Reading.invalid(
        "no answer (empty)" if not sentences(text) else "no conclusion read"
    )


def conclusion(text: str, context: Context) -> tuple[str, Reading] | None:
    """The concluding segment (what follows the last marker, or a closing sentence) and its reading."""
    parts = sentences(text)
    seen_marker = False
    for index in range(len(parts) - 1, -1, -1):
        sentence = parts[index]
        markers = list(_MARKER.finditer(sentence))
        if not markers:
            if seen_marker or index < len(parts) - CLOSING:
                continue
            reading = read_bare(sentence, context.options) or read_clause(sentence, context.persons)
            if reading is not None:
                return sentence, _where("closing sentence", reading)
            continue
        seen_marker = True
        for marker, following in zip(reversed(markers), [None, *reversed(markers)], strict=False):
            end = following.start() if following is not None else len(sentence)
            segment = sentence[marker.end() : end]
            if not segment.strip(" *_:.,"):
                continue
            reading = read_bare(segment, context.options) or read_clause(
                segment, context.persons, answer_slot=True
            )
            if reading is not None:
                return segment, _where(f"after {marker.group().strip(' ,:').lower()!r}", reading)
    return None


def _ends_with_option_list(text: str) -> bool:
    """The last two lines are options with different labels ("A) less" / "B) more"): a small model
    echoing the prompt's list; its last line is not a choice."""
    lines = [line for line in text.splitlines() if line.strip()][-2:]
    found = [_OPTION_LINE.match(line) for line in lines]
    labels = {m.group(2).lower() for m in found if m is not None}
    return len(lines) == 2 and all(found) and len(labels) == 2


def _where(where: str, reading: Reading) -> Reading:
    if reading.label is None:
        return reading
    return Reading(reading.label, f"{where}: {reading.rule}")
