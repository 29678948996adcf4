"""The totals turn that evidence-lock and symbolic share: each person's total, no comparison, no cue.

The turn carries no framing, so it is the same request in every framing case of a scenario (asked once,
then answered from the cache).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import Backend, OnResponse
from ..reading import totals
from ..types import Decoding, Prompt, Response, Turn
from .base import Kit, send, style, turn_prompt, user


def totals_prompt(prompt: Prompt, kit: Kit) -> Prompt:
    """The case's context with the totals request where its question was (same position)."""
    got = kit.parts(prompt)
    request = kit.text("totals", style(prompt.condition), prompt)
    text = kit.lay_out(prompt.condition.position, request, got.context, "")
    return turn_prompt(prompt, [user(text.rstrip())], "totals")


def ask_totals(
    prompts: Sequence[Prompt],
    backend: Backend,
    decoding: Decoding,
    kit: Kit,
    on_response: OnResponse | None = None,
) -> list[tuple[Turn, totals.Totals]]:
    """Turn 1 for every prompt in one batch, and the totals read from each reply."""
    asked = [totals_prompt(p, kit) for p in prompts]
    kind = f"totals-{style(prompts[0].condition)}" if prompts else "totals-short"
    budget = kit.decoding(decoding, kind)
    responses = send(backend, asked, budget, on_response)
    return [(Turn("totals", q, r), _read(q, r, budget)) for q, r in zip(asked, responses, strict=True)]


def cut(response: Response, decoding: Decoding) -> bool:
    """Whether the reply used its whole new-token budget (so its last line may be unfinished)."""
    return response.output_tokens is not None and response.output_tokens >= decoding.max_new_tokens


def _read(prompt: Prompt, response: Response, decoding: Decoding) -> totals.Totals:
    if response.error is not None:
        return totals.Totals(None, None, "error: no answer")
    return totals.read(response.text, prompt.person_a, prompt.person_b, cut(response, decoding))
