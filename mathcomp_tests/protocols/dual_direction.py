"""dual-direction: ask "does B spend more?" and "does B spend less?" (yes or no), and reconcile.

Both questions keep the case's position, identity and persons, and go out as one batch (two requests per
item, independent conversations). Which questions: the indirect-more and indirect-less framings keep
their family (the cue sentence mirrored in each direction); every other framing asks the two direct
questions. Reconciling: yes/no -> more, no/yes -> less, no/no -> equal; yes/yes is a disagreement, read
as `invalid` and counted (note `disagree`). An unreadable yes/no makes the item invalid; a failed request
an error. The `short` wording asks one word; cot and cot-json ask for steps, then "Answer: yes/no".
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import Backend, OnResponse
from ..reading import yes_no
from ..types import Decoding, Label, Prediction, Prompt, Response, Turn
from .base import Kit, ProtocolAnswer, error_prediction, send, style, turn_prompt, user

DISAGREE = "disagree"


def directions(framing: str) -> dict[str, str]:
    """The framing asked for each direction."""
    if framing in ("indirect-more", "indirect-less"):
        return {"more": "indirect-more", "less": "indirect-less"}
    return {"more": "direct-more", "less": "direct-less"}


def direction_prompt(prompt: Prompt, direction: str, kit: Kit) -> Prompt:
    framing = directions(prompt.condition.framing)[direction]
    part = kit.parts(prompt, framing=framing)
    instructions = kit.text("dual-direction", style(prompt.condition), prompt)
    text = kit.lay_out(prompt.condition.position, part.question, part.context, instructions)
    return turn_prompt(prompt, [user(text)], f"yes-no:{direction}")


def reconcile(more: yes_no.YesNo, less: yes_no.YesNo) -> tuple[Label | None, str]:
    """The label from the two yes/no answers, and the rule (or why none)."""
    if more.value is None or less.value is None:
        which = "more" if more.value is None else "less"
        return None, f"invalid: {which} question: {(more if which == 'more' else less).rule}"
    if more.value and less.value:
        return None, f"invalid: {DISAGREE}: yes to both directions"
    if more.value:
        return "more", "yes to more, no to less"
    if less.value:
        return "less", "no to more, yes to less"
    return "equal", "no to both directions"


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    asked = [direction_prompt(p, d, kit) for p in prompts for d in ("more", "less")]
    kind = f"yes-no-{style(prompts[0].condition)}" if prompts else "yes-no-short"
    def tick(index: int, response: Response) -> None:  # progress: one tick per item, on its second answer
        if on_response is not None and index % 2:
            on_response(index // 2, response)

    replies = send(backend, asked, kit.decoding(decoding, kind), tick)
    out = []
    for n in range(len(prompts)):
        turns = (Turn("more", asked[2 * n], replies[2 * n]), Turn("less", asked[2 * n + 1], replies[2 * n + 1]))
        failed = next((t.response for t in turns if t.response.error is not None), None)
        raw = f"more? {turns[0].response.text.strip()}\nless? {turns[1].response.text.strip()}"
        if failed is not None:
            out.append(ProtocolAnswer(error_prediction(failed), turns))
            continue
        label, rule = reconcile(yes_no.read(turns[0].response.text), yes_no.read(turns[1].response.text))
        note = DISAGREE if DISAGREE in rule else ""
        out.append(ProtocolAnswer(Prediction(label, "ok" if label else "invalid", raw, rule), turns, "", note))
    return out
