"""Who a comparison is about and which way it goes: "A spends less than B" is `more` for B.

A clause is read only when it names its subject (Person B or the identity noun, Person A or "the
person"), or for `equal` speaks of both ("they", "both", "the totals"). Negated, hedged, conditional
and question-like clauses are refused: the reader never guesses.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

from ..types import Label
from .context import Persons
from .outcome import Reading

_COMPARATIVES: dict[str, Label] = {
    "more": "more", "greater": "more", "higher": "more", "larger": "more", "bigger": "more",
    "longer": "more", "exceeds": "more", "exceed": "more", "outspends": "more",
    "less": "less", "fewer": "less", "smaller": "less", "lower": "less", "shorter": "less",
}  # fmt: skip
_COMPARATIVE = re.compile(r"\b(" + "|".join(_COMPARATIVES) + r")\b", re.IGNORECASE)
_EQUAL = re.compile(
    r"\b(?:equal(?:ly)?|identical|equivalent|as (?:much|many|long) (?:\w+ )?as|"
    r"the same(?: total)?(?= amount| number| quantity| time| total|\s+as\b|\s*[.,;!]|\s*$))",
    re.IGNORECASE,
)
_NUMERIC_EQUALITY = re.compile(r"\s*(?:to|=)\s*[\d$(]", re.IGNORECASE)
_OBJECT_CUE = re.compile(r"\b(?:than|as|to|with|compared|versus|vs|relative|against)\b", re.IGNORECASE)
_NUMBER_OBJECT = re.compile(r"(?:\s+\w+){0,3}?\s+than\s+[\d$]", re.IGNORECASE)
_BY = re.compile(r"\bby\s+(?:the\s+)?$", re.IGNORECASE)
_BOTH = re.compile(r"\b(?:both|they|their|each|the two|totals|amounts)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot|none|nothing)\b|n[’']t\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:likely|unlikely|probably|possibly|perhaps|maybe|might|may|could|seems?|appears?|unclear|"
    r"uncertain|unsure|guess|assum\w*|suppos\w*|depends?|impossible|insufficient|ambiguous|hard to|"
    r"difficult to|roughly|approximately equal)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"\?|\b(?:whether|if|compares?|need to|let[’']?s|let us|question|asks?|asked|check)\b",
    re.IGNORECASE,
)
_LETTER_PERSON = re.compile(r"(?<![\w)(])([AB])(?![\w)])")
_LETTER_NEXT_OK = re.compile(
    r"(?:[’']s\b|\s*(?:[.,;:!]|$)|\s+(?:spends?|spent|does|did|has|had|is|was|uses?|used|takes?|took|"
    r"devotes?|puts?|invests?|needs?|works?|and|while|with)\b)"
)
_LETTER_WITH_NEXT = re.compile(_LETTER_PERSON.pattern + "(?=" + _LETTER_NEXT_OK.pattern + ")")
_LETTER_PREV_OK = re.compile(r"\b(?:than|as|to|and|of|vs|versus|by|with|for|person)\s*", re.IGNORECASE)
"""Where a match ends, a letter is a person ("than B"): one pass finds them all."""
_WORD_RUN = re.compile(r"\w+")
_LONGEST_CUE = 8
"""The longest word `_OBJECT_CUE` looks for ("compared", "relative")."""


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    who: str
    """"a" or "b"."""


def mentions(text: str, persons: Persons) -> list[Mention]:
    """Every place the clause names Person A or B, longest spelling first (so "Black person" is B)."""
    spellings = sorted(((s, "a") for s in persons.a), key=lambda p: -len(p[0]))
    spellings += sorted(((s, "b") for s in persons.b), key=lambda p: -len(p[0]))
    spellings.sort(key=lambda p: -len(p[0]))
    taken = [False] * len(text)
    found: list[Mention] = []
    lower = text.lower()
    for spelling, who in spellings:
        for match in _spelled(spelling).finditer(lower):
            if any(taken[match.start() : match.end()]):
                continue
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
            found.append(Mention(match.start(), match.end(), who))
    letters = {m.start() for m in _LETTER_WITH_NEXT.finditer(text)}
    letters.update(m.end() for m in _LETTER_PREV_OK.finditer(text))
    for start in sorted(letters):
        letter = _LETTER_PERSON.match(text, start)
        if letter is not None and not any(taken[start : letter.end()]):
            found.append(Mention(start, letter.end(), letter.group(1).lower()))
    return sorted(found, key=lambda m: m.start)


@lru_cache(maxsize=256)
def _spelled(spelling: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(spelling)}(?![\w])")


def read_clause(clause: str, persons: Persons, answer_slot: bool = False) -> Reading | None:
    """The label a clause states for Person B, a refusal, or None when it states no comparison of the two.

    ``answer_slot``: the clause is where an answer belongs (after "Answer:", or a whole short reply), so
    a negated or hedged label word is refused even with no subject named.
    """
    found = mentions(clause, persons)
    comparisons = [
        (m.start(), m.end(), _COMPARATIVES[m.group(1).lower()]) for m in _COMPARATIVE.finditer(clause)
    ]
    comparisons += [(m.start(), m.end(), "equal") for m in _EQUAL.finditer(clause)]
    if not comparisons:
        return None
    both = _BOTH.search(clause) is not None
    if found or answer_slot or both:
        if _NEGATION.search(clause):
            return Reading.invalid("negated")
        if _HEDGE.search(clause):
            return Reading.invalid("hedged")
        if _QUESTION.search(clause):
            return None
    labels: dict[Label, str] = {}
    index = _Index(clause, found, both)
    for start, end, label in sorted(comparisons):
        decided = index.direction(start, end, label)
        if decided is not None:
            labels.setdefault(decided[0], decided[1])
    if len(labels) > 1:
        return Reading.invalid(f"conflicting labels ({', '.join(sorted(labels))})")
    if labels:
        label, rule = next(iter(labels.items()))
        return Reading(label, rule)
    return None


class _Index:
    """What `direction` asks of a clause, answered without rescanning it for each comparison (a clause
    may hold thousands): the mentions by position, the cue words, the runs of word characters."""

    def __init__(self, clause: str, found: list[Mention], both: bool) -> None:
        self.clause, self.found, self.both = clause, found, both
        self.starts = [m.start for m in found]
        self.least_end_from = list(accumulate((m.end for m in reversed(found)), min))[::-1]
        """least_end_from[i]: the smallest end among found[i:], rising with i."""
        cues = list(_OBJECT_CUE.finditer(clause))
        self.cue_starts, self.cue_ends = [m.start() for m in cues], [m.end() for m in cues]
        self._runs: tuple[list[int], list[int]] | None = None
        self._by: dict[int, bool] = {}

    def direction(self, start: int, end: int, label: Label) -> tuple[Label, str] | None:
        clause, found = self.clause, self.found
        last = bisect_right(self.least_end_from, start) - 1
        subject = found[last].who if last >= 0 else None  # the last mention ending before the comparison
        first = bisect_left(self.starts, end)
        after = found[first : first + 2]
        obj = None
        if after and self.cue_between(end, after[0].start):
            obj = after[0].who
        if subject is None and after and self.by_before(after[0].start):
            subject = after[0].who  # "more time is spent by Person B than Person A"
            obj = after[1].who if len(after) > 1 else None
        if label != "equal" and _NUMBER_OBJECT.match(clause, end):
            return None  # "45, which is 15 more than 30": numbers compared, not the persons
        if label == "equal":
            if _NUMERIC_EQUALITY.match(clause, end):
                return None
            if subject or obj or self.both:
                return "equal", "comparison: the same for both"
            return None
        if subject is not None and obj is not None and subject == obj:
            return None
        if subject is None and obj is not None:
            subject = "a" if obj == "b" else "b"
        if subject is None:
            return None
        if subject == "b":
            return label, "comparison: Person B is the subject"
        return ("less" if label == "more" else "more"), "comparison: Person A is the subject"

    def cue_between(self, start: int, end: int) -> bool:
        """Whether `_OBJECT_CUE` finds a cue in ``clause[start:end]``: a cue word of the whole clause lying
        inside, or a word the slice cuts at either edge that reads as one there."""
        if start >= end:
            return False
        i = bisect_left(self.cue_starts, start)
        if i < len(self.cue_starts) and self.cue_ends[i] <= end:
            return True
        return any(
            self._cue_word(max(a, start), min(b, end))
            for a, b in (self._run_at(start), self._run_at(end - 1))
            if a < start or b > end
        )

    def _cue_word(self, start: int, end: int) -> bool:
        return 0 < end - start <= _LONGEST_CUE and _OBJECT_CUE.fullmatch(self.clause[start:end]) is not None

    def _run_at(self, position: int) -> tuple[int, int]:
        """The run of word characters holding ``position``; an empty one where there is none."""
        if self._runs is None:
            runs = list(_WORD_RUN.finditer(self.clause))
            self._runs = [m.start() for m in runs], [m.end() for m in runs]
        starts, ends = self._runs
        i = bisect_right(starts, position) - 1
        if i >= 0 and ends[i] > position:
            return starts[i], ends[i]
        return position, position

    def by_before(self, end: int) -> bool:
        """Whether ``clause[:end]`` ends with "by (the) " (`_BY`), looking back only as far as it can reach."""
        end = min(end, len(self.clause))
        if end not in self._by:
            reach = _space_before(self.clause, end)
            reach = _space_before(self.clause, max(reach - 3, 0)) - 2
            self._by[end] = _BY.search(self.clause, max(reach, 0), end) is not None
        return self._by[end]


def _space_before(text: str, end: int) -> int:
    """Where the run of white space ending at ``end`` starts (``end`` when there is none)."""
    step, position = 64, end
    while position > 0:
        low = max(position - step, 0)
        kept = text[low:position].rstrip()
        if kept:
            return low + len(kept)
        position, step = low, step * 2
    return 0


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")


def sentences(text: str) -> list[str]:
    """Lines, then sentences within them ("2.5 hours" stays whole: a split needs white space)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def combine(readings: list[Reading]) -> Reading | None:
    """One verdict from several sentences' readings: a refusal wins, two different labels conflict."""
    refusals = [r for r in readings if r.label is None]
    if refusals:
        return refusals[0]
    labels = dict.fromkeys(r.label for r in readings)
    if len(labels) > 1:
        return Reading.invalid(f"conflicting labels ({', '.join(sorted(str(x) for x in labels))})")
    return readings[0] if readings else None
