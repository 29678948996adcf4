"""What every protocol shares: the answer it returns, the turns it sent, and the kit it lays prompts out with.

A protocol is one function, ``ask(prompts, backend, decoding, kit, on_response) -> list[ProtocolAnswer]``:
one answer per prompt, in order. A multi-turn protocol sends each turn for all prompts as one batch through
the backend it is given (the run's cached backend), so that every turn is a cached request and a run killed
between turns resumes from the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .. import formats, tomltext
from ..backends.base import Backend, OnResponse
from ..paths import fixtures
from ..prompts import Names, Parts, PromptConfigError, PromptSet, parts
from ..types import Condition, Decoding, Message, Prediction, Prompt, Response, Turn

TURN_TOKENS = {"totals-short": 48, "totals-steps": 512, "rewrite": 96, "yes-no-short": 8, "yes-no-steps": 512}
"""max_new_tokens of each kind of extra turn (a label turn takes its format's default), unless
--max-new-tokens sets one for all."""
TEXT_KEYS = {
    "totals": ("short", "steps"),
    "evidence-lock": ("label", "unread"),
    "dual-direction": ("short", "steps"),
    "canonicalize": ("rewrite",),
}


@dataclass(frozen=True)
class ProtocolAnswer:
    prediction: Prediction
    turns: tuple[Turn, ...]
    read_as: str = ""
    """The answer format the label was read in (a judge may decide it), or "" when not read from a label."""
    note: str = ""
    """What the protocol noticed on this item: a disagreement, a rejected rewrite (counted in the summary)."""


@dataclass(frozen=True)
class Kit:
    """How a protocol lays out its turns: the run's prompt set, names and the protocols' wording."""

    prompt_set: PromptSet
    names: Callable[[Condition], Names]
    texts: dict[str, dict[str, str]]
    max_new_tokens: int | None = None
    label_tokens: Callable[[str], int] = lambda fmt: 512

    def parts(self, prompt: Prompt, **changes: str) -> Parts:
        """The question, context and instructions of ``prompt``'s scenario under its condition, changed."""
        condition = replace(prompt.condition, **changes)
        return parts(prompt.scenario, condition, self.prompt_set, self.names(condition))

    def lay_out(self, position: str, question: str, context: str, instructions: str) -> str:
        return self.prompt_set.positions[position].format(
            question=question, context=context, instructions=instructions
        )

    def text(self, table: str, key: str, prompt: Prompt, **values: str) -> str:
        """A protocol's wording, filled with the persons' names, the quantity and the task."""
        quantity = self.prompt_set.quantity_words.get(prompt.scenario.quantity, prompt.scenario.quantity)
        return self.texts[table][key].format(
            person_a=prompt.person_a,
            person_b=prompt.person_b,
            quantity=quantity,
            task=prompt.scenario.task,
            **values,
        )

    def decoding(self, decoding: Decoding, kind: str) -> Decoding:
        """``decoding`` with the new-token budget of a turn kind (TURN_TOKENS) or a format (a label turn)."""
        tokens = self.max_new_tokens or TURN_TOKENS.get(kind) or self.label_tokens(kind)
        return replace(decoding, max_new_tokens=tokens)


def style(condition: Condition) -> str:
    """`steps` for the chain-of-thought formats, else `short`."""
    return "steps" if formats.get(condition.format).steps else "short"


def turn_prompt(prompt: Prompt, messages: Sequence[Message], asks: str, **changes: str) -> Prompt:
    """A turn's prompt: the same scenario and persons, its own messages (and condition changes)."""
    condition = replace(prompt.condition, **changes) if changes else prompt.condition
    return replace(prompt, condition=condition, messages=tuple(messages), asks=asks)


def user(text: str) -> Message:
    return Message("user", text)


def send(
    backend: Backend, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
) -> list[Response]:
    """One turn for every prompt, as one batch (the cached backend answers what it already has)."""
    return backend.complete(list(prompts), decoding, on_response) if prompts else []


def error_prediction(response: Response) -> Prediction:
    return Prediction(None, "error", response.text, "error: no answer")


def load_texts(path: Path | None = None) -> dict[str, dict[str, str]]:
    """fixtures/protocols.toml, checked for every wording the protocols use."""
    path = path or fixtures() / "protocols.toml"
    data = tomltext.read(path, PromptConfigError)
    for table, keys in TEXT_KEYS.items():
        missing = [k for k in keys if not isinstance(data.get(table, {}).get(k), str)]
        if missing:
            raise PromptConfigError(f"{path}: [{table}] lacks {', '.join(missing)}")
    return {table: dict(data[table]) for table in TEXT_KEYS}
