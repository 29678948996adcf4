"""Answer formats, one record each, and ``read``: the one way every answer in the project is read.

A format says what its prompt asks (the instructions key in prompts.toml), how many new tokens an answer
may take, how the answer is read (a reader in ``reading/``), whether a judge model may decide what the
reading rules decline, whether it asks for steps before the answer, which format the cot protocol asks
instead, how the label is placed for log-probability scoring, and how the symbolic reference writes its
answer. A new format is a reader module, one ``Format`` below, and its instructions in prompts.toml.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .reading import cot, cot_json, json_answer, one_word
from .reading.context import Context, Persons, options_from_prompt
from .reading.outcome import Reading
from .types import Prediction, Prompt, Response

Reader = Callable[[str, Context], Reading]


@dataclass(frozen=True)
class Format:
    name: str
    reader: Reader
    max_new_tokens: int
    """New tokens an answer may take unless --max-new-tokens says otherwise."""
    steps: bool
    """Asks for reasoning before the answer: long generations, a judge may decide, protocols ask for steps."""
    cot: str
    """The format the cot protocol asks instead (itself when it already asks for steps)."""
    logprob_prefix: str | None = None
    """Text between the prompt and the label when the label is scored by log-probability (None: this
    format is always generated)."""
    logprob_suffix: str = ""
    """Text after the label in the answer a log-probability scorer reports."""
    symbolic: Callable[[str, str], str] = lambda label, reasoning: label
    """How the symbolic reference writes (label, reasoning) in this format."""

    @property
    def judged(self) -> bool:
        """A judge model (--judge-model) decides the answers the reading rules decline."""
        return self.steps

    def logprob_answer(self, label: str) -> str:
        return f"{self.logprob_prefix or ''}{label}{self.logprob_suffix}"


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("one-word", one_word.read, 8, steps=False, cot="cot", logprob_prefix=""),
        Format(
            "json",
            json_answer.read,
            24,
            steps=False,
            cot="cot-json",
            logprob_prefix='{"answer": "',
            logprob_suffix='"}',
            symbolic=lambda label, reasoning: json.dumps({"answer": label}),
        ),
        Format(
            "cot", cot.read, 512, steps=True, cot="cot", symbolic=lambda label, why: f"{why}\nThe answer is {label}."
        ),
        Format(
            "cot-json",
            cot_json.read,
            512,
            steps=True,
            cot="cot-json",
            symbolic=lambda label, why: json.dumps({"reasoning": why, "answer": label}),
        ),
    )
}
NAMES: tuple[str, ...] = tuple(FORMATS)
STEP_FORMATS: tuple[str, ...] = tuple(name for name, f in FORMATS.items() if f.steps)


class UnknownFormatError(ValueError):
    """A format name no Format is registered under."""


def get(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormatError(f"unknown answer format {name!r}; expected one of {', '.join(NAMES)}") from None


def context_for(prompt: Prompt) -> Context:
    """The option letters the prompt listed and the names it gave the persons."""
    return Context(options_from_prompt(prompt.text), Persons.named(prompt.person_a, prompt.person_b))


def read_text(text: str, format: str, context: Context | None = None) -> Reading:
    """The label and the deciding rule for ``text`` under an answer format, without a prompt (the
    answers command, and the judge's one-word reply)."""
    return get(format).reader(text, context or Context())


def read(prompt: Prompt, response: Response, format: str | None = None) -> Prediction:
    """The prediction for ``response`` to ``prompt``: read in the prompt's format (or ``format``, for a
    protocol that reads a turn in another), against the option letters and names the prompt used. Every
    answer in a run (the model's, the baseline model's, the judge's, each protocol turn's) is read here."""
    return read_response(response, format or prompt.condition.format, context_for(prompt))


def read_response(response: Response, format: str, context: Context | None = None) -> Prediction:
    """``read`` where the prompt's context is already known (or the paper's default)."""
    reader = get(format).reader
    if response.error is not None:
        return Prediction(None, "error", response.text, "error: no answer")
    reading = reader(response.text, context or Context())
    return Prediction(reading.label, "ok" if reading.label else "invalid", response.text, reading.rule)
