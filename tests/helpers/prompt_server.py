"""A fault server that answers each request from the prompt it was asked: a model whose answer depends on
the names, the option order or the cue in front of it (tests/test_bad_inputs_models.py, _parts.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .fault_server import Fault, FaultServer


class PromptServer(FaultServer):
    """A real OpenAI-compatible server that answers each request as ``fault_for(prompt)`` says."""

    def __init__(self, fault_for: Callable[[str], Fault], **kwargs: Any):
        super().__init__(**kwargs)
        self.fault_for = fault_for

    def _next(self, prompt: str) -> tuple[int, int]:
        # the server reads the schedule right after this, with no await between: one request at a time
        self.schedule = lambda index, attempt: self.fault_for(prompt)
        return super()._next(prompt)


def replies(answer: Callable[[str], str]) -> Callable[[str], Fault]:
    return lambda prompt: Fault(text=answer(prompt))


def question(prompt: str) -> str:
    return next(line for line in prompt.splitlines() if line.rstrip().endswith("?"))
