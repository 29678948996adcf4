"""symbolic: the model extracts each person's total (one request); sympy compares them.

The label comes from the two numbers, never from the model's wording: an answer without a readable total
for both persons is `invalid`, its text kept. No cue reaches the model, so every framing asks the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import Backend, OnResponse
from ..reading.totals import compare
from ..types import Decoding, Prediction, Prompt
from .base import Kit, ProtocolAnswer, error_prediction
from .totals import ask_totals


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    out = []
    for turn, got in ask_totals(prompts, backend, decoding, kit, on_response):
        if turn.response.error is not None:
            prediction = error_prediction(turn.response)
        else:
            label = compare(got)
            status = "ok" if label is not None else "invalid"
            prediction = Prediction(label, status, turn.response.text, "sympy" if label else got.rule)  # type: ignore[arg-type]
        out.append(ProtocolAnswer(prediction, (turn,)))
    return out
