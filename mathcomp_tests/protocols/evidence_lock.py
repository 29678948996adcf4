"""evidence-lock (seed 002's Proof-Before-Preference, for this task): two turns in one conversation.

Turn 1 asks for each person's total only: no comparison, no cue (the shared totals turn). Turn 2 repeats
the totals read from turn 1 as locked, then asks the case's own framed question in the case's format; its
answer is read by the format's reader. Where turn 1 gave no readable totals, turn 2 points back to "the
totals you gave above" instead of repeating them. A failed turn 1 is an error; turn 2 is not asked.
Turn 1's reply is carried into the conversation without a last line the token budget cut off (SmolLM2
repeats its totals until cut mid-number): the model is not shown a half-written total that contradicts
the locked ones. Its record keeps the reply whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import formats
from ..backends.base import Backend, OnResponse
from ..reading.totals import Totals, finished, show
from ..types import Decoding, Message, Prompt, Turn
from .base import Kit, ProtocolAnswer, error_prediction, send, turn_prompt, user
from .totals import ask_totals


def locked(prompt: Prompt, got: Totals, kit: Kit) -> str:
    if got.a is None or got.b is None:
        return kit.text("evidence-lock", "unread", prompt)
    return f"{prompt.person_a}: {show(got.a)}\n{prompt.person_b}: {show(got.b)}"


def label_prompt(prompt: Prompt, first: Turn, got: Totals, kit: Kit) -> Prompt:
    """Turn 2: the conversation so far, then the locked totals and the case's question."""
    part = kit.parts(prompt)
    text = kit.text(
        "evidence-lock",
        "label",
        prompt,
        locked=locked(prompt, got, kit),
        question=part.question,
        instructions=part.instructions,
    )
    said = finished(first.response.text, got.cut)
    messages = [*first.prompt.messages, Message("assistant", said), user(text)]
    return turn_prompt(prompt, messages, "label")


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    firsts = ask_totals(prompts, backend, decoding, kit)
    live = [n for n, (turn, _) in enumerate(firsts) if turn.response.error is None]
    seconds = [label_prompt(prompts[n], *firsts[n], kit) for n in live]
    fmt = prompts[0].condition.format if prompts else "one-word"
    replies = dict(zip(live, send(backend, seconds, kit.decoding(decoding, fmt), on_response), strict=True))
    asked = dict(zip(live, seconds, strict=True))
    out = []
    for n, (first, _) in enumerate(firsts):
        if n not in replies:
            out.append(ProtocolAnswer(error_prediction(first.response), (first,)))
            continue
        q, r = asked[n], replies[n]
        prediction = formats.read(q, r, fmt)
        out.append(ProtocolAnswer(prediction, (first, Turn("label", q, r)), fmt))
    return out
