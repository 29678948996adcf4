"""The sympy reference: always right, answers in whatever format the prompt asks for."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from ... import formats
from ...data.equations import compare, show
from ...types import Decoding, Prompt, Response
from ..base import OnResponse


class SymbolicBackend:
    """Solves each scenario from its equations; a model-free floor for the suite itself."""

    model_id = "symbolic"
    revision = "1"

    def __init__(self, name: str = "symbolic", options: object = None):
        """Takes the registry's (name, options) and needs neither: the answer comes from the equations."""

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        out = []
        for index, prompt in enumerate(prompts):
            response = Response(text=self._answer(prompt))
            if on_response:
                on_response(index, response)
            out.append(response)
        return out

    def cache_identity(self) -> dict[str, object]:
        return {"backend": "symbolic", "revision": self.revision}

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        """The answer comes from the scenario's equations, not from the prompt's words."""
        s = prompt.scenario
        return {"expr_a": s.expr_a, "expr_b": s.expr_b, "total_a": str(s.total_a), "total_b": str(s.total_b)}

    def close(self) -> None:
        return None

    @staticmethod
    def _answer(prompt: Prompt) -> str:
        s = prompt.scenario
        total_a, total_b = s.total_a, s.total_b  # evaluated exactly once, when the dataset was loaded
        label = compare(total_a, total_b)
        reasoning = f"Person A: {s.expr_a} = {show(total_a)}. Person B: {s.expr_b} = {show(total_b)}."
        if prompt.asks != "label":
            return _turn_answer(prompt, label)
        return formats.get(prompt.condition.format).symbolic(label, reasoning)


REWRITE_REPLY = "(no rewrite: the symbolic backend answers from the scenario's equations, not from words)"
"""The symbolic backend's reply to a rewrite turn: canonicalize then falls back to the neutral question."""


def _turn_answer(prompt: Prompt, label: str) -> str:
    """A protocol's extra turn (Prompt.asks): the exact totals, yes or no for one direction, no rewrite."""
    s = prompt.scenario
    if prompt.asks == "totals":
        return f"{prompt.person_a}: {_plain(s.total_a)}\n{prompt.person_b}: {_plain(s.total_b)}"
    if prompt.asks.startswith("yes-no:"):
        return "yes" if prompt.asks.split(":", 1)[1] == label else "no"
    if prompt.asks == "rewrite":
        return REWRITE_REPLY
    raise ValueError(f"the symbolic backend cannot answer a turn that asks for {prompt.asks!r}")


def _plain(value: Fraction) -> str:
    """An exact total the totals reader reads back exactly: an integer or p/q."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
