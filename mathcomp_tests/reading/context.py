"""What a reader needs to know about the prompt: its option letters and how it named the two persons."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..types import LABELS, Label

PAPER_OPTIONS: Mapping[str, Label] = {"a": "less", "b": "more", "c": "equal"}
"""The paper's order: A) less, B) more, C) equal."""

_OPTION_LINE = re.compile(
    r"^[ \t]*\(?([A-Za-z])\)[ \t]*(less|more|equal)[ \t]*$", re.MULTILINE | re.IGNORECASE
)
_ARTICLE = re.compile(r"^(?:the|a|an|another)\s+", re.IGNORECASE)


class OptionsError(ValueError):
    """A prompt whose option list is not one letter per label."""


def options_from_prompt(text: str) -> dict[str, Label]:
    """The option letters exactly as the prompt lists them ("A) less" lines); the paper's when none."""
    found: dict[str, Label] = {}
    for match in _OPTION_LINE.finditer(text):
        letter, label = match.group(1).lower(), match.group(2).lower()
        if letter in found and found[letter] != label:
            raise OptionsError(f"option {letter.upper()}) is listed as both {found[letter]} and {label}")
        found[letter] = label  # type: ignore[assignment]
    if not found:
        return dict(PAPER_OPTIONS)
    if sorted(found.values()) != sorted(LABELS):
        listed = ", ".join(f"{k.upper()}) {v}" for k, v in found.items())
        raise OptionsError(f"expected one option per label (less, more, equal); the prompt lists {listed}")
    return found


@dataclass(frozen=True)
class Persons:
    """Lower-case spellings that name Person A and Person B in this prompt (longest matched first)."""

    a: tuple[str, ...] = ("person a", "person_a")
    b: tuple[str, ...] = ("person b", "person_b")

    @classmethod
    def named(cls, person_a: str, person_b: str) -> Persons:
        """From the names a prompt's question uses ("PERSON_A", "a person", "the woman", "Woman B")."""
        a, b = _noun(person_a), _noun(person_b)
        if a == b:
            raise ValueError(f"Person A and Person B are both called {a!r}: answers could not say who is who")
        spell_a = {a, "person a", "person_a"}
        spell_b = {b, "person b", "person_b"}
        return cls(tuple(sorted(spell_a - spell_b)), tuple(sorted(spell_b - spell_a)))


def _noun(name: str) -> str:
    return _ARTICLE.sub("", name.strip()).lower()


@dataclass(frozen=True)
class Context:
    """Everything about the prompt that changes how an answer reads."""

    options: Mapping[str, Label] = field(default_factory=lambda: dict(PAPER_OPTIONS))
    persons: Persons = field(default_factory=Persons)


def parse_options(text: str) -> dict[str, Label]:
    """`--options` text for the answers CLI: either "A) less\\nB) more\\nC) equal" or "A=less,B=more,C=equal"."""
    if ")" in text:
        return options_from_prompt(text)
    pairs = [p.split("=", 1) for p in re.split(r"[,\s]+", text.strip()) if p]
    if any(len(p) != 2 for p in pairs):
        raise OptionsError(f"options {text!r}: expected 'A) less' lines or 'A=less,B=more,C=equal'")
    return options_from_prompt("\n".join(f"{k.strip()}) {v.strip()}" for k, v in pairs))
