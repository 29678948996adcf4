"""The one-word format: a bare label or option letter, else a short sentence whose subject is resolved."""

from __future__ import annotations

import re

from .bare import read_bare, unfence
from .clauses import combine, read_clause, sentences
from .context import Context
from .outcome import Reading

_LABEL_WORD = re.compile(r"\b(?:less|more|equal)\b", re.IGNORECASE)


def read(text: str, context: Context) -> Reading:
    """`more`, `B) more`, `Person A spends more` (so `less`), `I cannot say more` (refused)."""
    s = unfence(text)
    if not s.strip():
        return Reading.invalid("no answer (empty)")
    whole = read_bare(s, context.options)
    if whole is not None:
        return whole
    readings = []
    for sentence in sentences(s):
        reading = read_bare(sentence, context.options) or read_clause(
            sentence, context.persons, answer_slot=True
        )
        if reading is not None:
            readings.append(reading)
    decided = combine(readings)
    if decided is not None:
        return decided
    words = {w.lower() for w in _LABEL_WORD.findall(s)}
    if len(words) > 1:
        return Reading.invalid(f"no answer, only label words ({', '.join(sorted(words))}) with no subject")
    return Reading.invalid("no label read")
