"""Read a model's answer into a label; anything unreadable is `invalid`, with the raw text kept.

The rules live in `reading/` (one module per format); this is the entry the suite and the
`python -m mathcomp_tests.answers` command share.
"""

from __future__ import annotations

from collections.abc import Callable

from ..types import Label, Prediction, Prompt, Response
from .reading import cot, cot_json, json_answer, one_word
from .reading.context import Context, Persons, options_from_prompt
from .reading.outcome import Reading

READERS: dict[str, Callable[[str, Context], Reading]] = {
    "one-word": one_word.read,
    "json": json_answer.read,
    "cot": cot.read,
    "cot-json": cot_json.read,
}


def context_for(prompt: Prompt) -> Context:
    """The option letters the prompt listed and the names it gave the persons."""
    return Context(options_from_prompt(prompt.text), Persons.named(prompt.person_a, prompt.person_b))


def read(text: str, format: str, context: Context | None = None) -> Reading:
    """The label and the deciding rule for ``text`` under an answer format."""
    reader = READERS.get(format)
    if reader is None:
        raise ValueError(f"unknown answer format {format!r}; expected one of {', '.join(READERS)}")
    return reader(text, context or Context())


def parse(response: Response, format: str, context: Context | None = None) -> Prediction:
    """The prediction for a response under an answer format (`one-word`, `json`, `cot`, `cot-json`)."""
    if format not in READERS:
        read("", format)
    if response.error is not None:
        return Prediction(None, "error", response.text, "error: no answer")
    reading = read(response.text, format, context)
    return Prediction(reading.label, "ok" if reading.label else "invalid", response.text, reading.rule)


def read_word(text: str, context: Context | None = None) -> Label | None:
    return read(text, "one-word", context).label


def read_json(text: str, context: Context | None = None) -> Label | None:
    return read(text, "json", context).label


def read_cot(text: str, context: Context | None = None) -> Label | None:
    return read(text, "cot", context).label
