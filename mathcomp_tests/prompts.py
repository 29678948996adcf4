"""Turn a scenario and a condition into the exact prompt the authors' templates produce."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import tomltext
from .formats import NAMES as FORMATS
from .paths import fixtures
from .printable import control_characters, printable
from .types import ALL_FRAMINGS, PAPER_ORDER, POSITIONS, Condition, Message, Prompt, Scenario

_PERSON = re.compile(r"\[person[ _]?(a|b)\]", re.IGNORECASE)
_OPTIONS_BLOCK = re.compile(r"A\) (?:less|more|equal)\nB\) (?:less|more|equal)\nC\) (?:less|more|equal)")
_SENTENCE_START = re.compile(r"(^|[.!?]\s+|\n)$")


class PromptConfigError(ValueError):
    """prompts.toml or identities.toml is missing something a condition needs."""


@dataclass(frozen=True)
class Names:
    """How Person A and B are written: first mention and later ones in the context, and in the question."""

    a_first: str
    a_later: str
    a_question: str
    b_first: str
    b_later: str
    b_question: str


@dataclass(frozen=True)
class PromptSet:
    name: str
    templates: dict[str, str]
    positions: dict[str, str]
    instructions: dict[str, str]
    quantity_words: dict[str, str]
    std: tuple[str, str]


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def load_prompt_set(name: str, path: Path | None = None) -> PromptSet:
    path = path or fixtures() / "prompts.toml"
    data = tomltext.read(path, PromptConfigError)
    sets = data.get("sets", {})
    if name not in sets:
        raise PromptConfigError(f"{path}: no prompt set {name!r}; known: {', '.join(sorted(sets))}")
    chosen = sets[name]
    _require(path, "templates", data.get("templates", {}), ALL_FRAMINGS)
    _require(path, "positions", data.get("positions", {}), POSITIONS)
    _require(path, f"sets.{name}.instructions", chosen.get("instructions", {}), FORMATS)
    return PromptSet(
        name=name,
        templates=dict(data["templates"]),
        positions=dict(data["positions"]),
        instructions=dict(chosen["instructions"]),
        quantity_words=dict(data.get("quantity_words", {})),
        std=(chosen.get("std_person_a", "PERSON_A"), chosen.get("std_person_b", "PERSON_B")),
    )


IDENTITY_SIDES: tuple[str, ...] = ("b", "a", "both")
"""Who carries the identity marker: Person B (the paper), Person A, or both."""


def load_identities(path: Path | None = None, on: str = "b") -> dict[str, Names]:
    """Every identity id (``std`` excluded) mapped to how the two persons are written.

    on="b" (the paper): A is "a person", B "<article> <noun>". on="a": the other way round. on="both":
    "<Noun> A" and "<Noun> B", so that both carry the marker and an answer can still say who is who.
    """
    if on not in IDENTITY_SIDES:
        raise PromptConfigError(f"identity side {on!r}: expected one of {', '.join(IDENTITY_SIDES)}")
    path = path or fixtures() / "identities.toml"
    data = tomltext.read(path, PromptConfigError)
    person_a = data.get("person_a", {})
    if not isinstance(person_a, dict):
        raise PromptConfigError(f"{path}: person_a is {_shown(person_a)}; expected a table [person_a] with a noun")
    plain = _text(path, "person_a", "noun", person_a.get("noun", "person"))
    identities = data.get("identities", {})
    if not isinstance(identities, dict):
        raise PromptConfigError(f"{path}: identities is {_shown(identities)}; expected tables [identities.<id>]")
    names = {}
    for key, entry in identities.items():
        if not isinstance(entry, dict):
            raise PromptConfigError(
                f"{path}: identities.{key} is {_shown(entry)}; expected a table [identities.{key}] with a noun"
            )
        if "noun" not in entry:
            raise PromptConfigError(f"{path}: identities.{key} has no 'noun'")
        noun = _text(path, f"identities.{key}", "noun", entry["noun"])
        if "article" in entry:
            _text(path, f"identities.{key}", "article", entry["article"])
        if noun.strip().lower() == plain.lower():
            raise PromptConfigError(
                f"{path}: identities.{key} is called {plain!r} like Person A; answers could not tell them apart"
            )
        marked = _Side(f"{entry.get('article', article(noun))} {noun}", f"the {noun}", f"the {noun}")
        other = _Side(f"{article(plain)} {plain}", f"the {plain}", f"{article(plain)} {plain}")
        if on == "both":
            a, b = (_Side(*(f"{noun} {x}",) * 3) for x in "AB")
        else:
            a, b = (other, marked) if on == "b" else (marked, _Side(other.first, other.later, other.later))
        names[key] = Names(a.first, a.later, a.question, b.first, b.later, b.question)
    return names


@dataclass(frozen=True)
class _Side:
    first: str
    later: str
    question: str


def std_names(prompt_set: PromptSet) -> Names:
    a, b = prompt_set.std
    return Names(a, a, a, b, b, b)


@dataclass(frozen=True)
class Parts:
    """The pieces a prompt is laid out from: the framed question, the persons' text, the instructions."""

    question: str
    context: str
    instructions: str
    quantity: str
    """The studied quantity as the question words it (``effort`` for counts)."""


def parts(scenario: Scenario, condition: Condition, prompt_set: PromptSet, names: Names) -> Parts:
    """The question under ``condition``'s framing, the context with the persons named, the instructions."""
    try:
        template = prompt_set.templates[condition.framing]
        instructions = prompt_set.instructions[condition.format]
    except KeyError as exc:
        raise PromptConfigError(f"prompt set {prompt_set.name!r} has no {exc.args[0]!r}") from exc
    if condition.options != PAPER_ORDER:
        instructions = reorder_options(
            instructions, condition.options, f"{prompt_set.name}.{condition.format}"
        )
    context = _fill_persons(f"{scenario.text_a} {scenario.text_b}", names)
    quantity = prompt_set.quantity_words.get(scenario.quantity, scenario.quantity)
    question = template.format(
        person_a=names.a_question, person_b=names.b_question, studied_quantity=quantity, task=scenario.task
    )
    return Parts(_capitalise_start(question), context, instructions, quantity)


def build(scenario: Scenario, condition: Condition, prompt_set: PromptSet, names: Names) -> Prompt:
    """The one user message for ``scenario`` under ``condition``."""
    try:
        layout = prompt_set.positions[condition.position]
    except KeyError as exc:
        raise PromptConfigError(f"prompt set {prompt_set.name!r} has no {exc.args[0]!r}") from exc
    got = parts(scenario, condition, prompt_set, names)
    text = layout.format(question=got.question, context=got.context, instructions=got.instructions)
    return Prompt(
        scenario, condition, (Message("user", text),), prompt_set.name, names.a_question, names.b_question
    )


def reorder_options(instructions: str, order: str, where: str = "instructions") -> str:
    """The lettered option list rewritten in ``order`` (`mle`: A) more B) less C) equal); the rest kept."""
    words = {"l": "less", "m": "more", "e": "equal"}
    if sorted(order) != sorted(words):
        raise PromptConfigError(
            f"option order {order!r}: expected a permutation of l, m, e (less, more, equal)"
        )
    block = _OPTIONS_BLOCK.search(instructions)
    if block is None:
        raise PromptConfigError(f"{where}: no 'A) ...' 'B) ...' 'C) ...' option lines to reorder")
    lines = "\n".join(f"{letter}) {words[code]}" for letter, code in zip("ABC", order, strict=True))
    return instructions[: block.start()] + lines + instructions[block.end() :]


def _fill_persons(text: str, names: Names) -> str:
    """Replace both placeholder spellings; first mention vs later ones; capitalise at a sentence start."""
    seen: set[str] = set()
    out: list[str] = []
    last = 0
    for match in _PERSON.finditer(text):
        who = match.group(1).lower()
        if who == "a":
            word = names.a_later if "a" in seen else names.a_first
        else:
            word = names.b_later if "b" in seen else names.b_first
        seen.add(who)
        before = text[last : match.start()]
        out.append(before)
        # Whether the text so far ends a sentence shows in its last two pieces (the name put in before, then
        # the text since), unless that name is blank: no need to join the whole text at every name.
        window = out[-2] + before if len(out) >= 2 and out[-2].strip() else "".join(out)
        if _SENTENCE_START.search(window):
            word = word[:1].upper() + word[1:]
        out.append(word)
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def _capitalise_start(text: str) -> str:
    return text[:1].upper() + text[1:]


def _text(path: Path, table: str, key: str, value: object) -> str:
    """A word written into every prompt: non-empty text on one line, without control characters."""
    what = f"{path}: {table}.{key} is"
    expected = "expected a word such as \"woman\""
    if not isinstance(value, str):
        raise PromptConfigError(f"{what} {_shown(value)}; {expected} (text in quotes)")
    if not value.strip():
        raise PromptConfigError(f"{what} {value!r}, empty; {expected}")
    bad = control_characters(value)
    if bad:
        raise PromptConfigError(
            f"{what} '{printable(value)}' with the control character(s) {' '.join(bad)}; {expected}, printable text"
        )
    return value


def _shown(value: object) -> str:
    """A TOML value as a refusal shows it: its type and (cut short) its value."""
    kind = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )
    text = repr(value)
    return f"{kind} ({text if len(text) <= 40 else text[:40] + '...'})"


def _require(path: Path, table: str, got: dict, keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in got]
    if missing:
        raise PromptConfigError(f"{path}: [{table}] lacks {', '.join(missing)}")


def known_identities(path: Path | None = None) -> tuple[str, ...]:
    """``std`` and every identity marker of the identities file (the bundled one unless given)."""
    return ("std", *load_identities(path))
