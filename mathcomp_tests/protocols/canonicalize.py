"""canonicalize: the model rewrites the framed question into a neutral one; the rewrite is checked.

Turn 1 shows the model the case's question alone (no context) and asks for a neutral rewrite. A rewrite
is kept when it names both persons and has no direction word (more, less, equal, same, ...); otherwise
the protocol falls back to the prompt set's own neutral question and notes why (`rewrite rejected`).
Turn 2 is a fresh prompt: the case's context, the question chosen, the case's format. When every rewrite
is rejected the protocol asks exactly the neutral framing: that is its upper bound (the cue removed by
construction), not a measurement of the model's rewriting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import formats
from ..backends.base import Backend, OnResponse
from ..types import Decoding, Prompt, Response, Turn
from .base import Kit, ProtocolAnswer, error_prediction, send, turn_prompt, user

REJECTED = "rewrite rejected"
_DIRECTION = re.compile(
    r"\b(more|less|equal\w*|same|fewer|greater|higher|lower|larger|smaller|bigger|exceed\w*|"
    r"outspend\w*|most|least|differen\w*|differ\w*|than|as much)\b",
    re.IGNORECASE,
)
MAX_CHARS = 400


def rewrite_prompt(prompt: Prompt, kit: Kit) -> Prompt:
    question = kit.parts(prompt).question
    return turn_prompt(prompt, [user(kit.text("canonicalize", "rewrite", prompt, question=question))], "rewrite")


def checked(prompt: Prompt, reply: Response) -> tuple[str | None, str]:
    """The rewritten question when it passes, else None and why it was rejected."""
    if reply.error is not None:
        return None, "no reply"
    lines = [line.strip() for line in reply.text.strip().splitlines() if line.strip()]
    text = re.sub(r"^(?:rewritten question|question)\s*:\s*", "", lines[0], flags=re.IGNORECASE) if lines else ""
    text = text.strip().strip("\"'`*").strip()
    if not text:
        return None, "empty"
    if len(text) > MAX_CHARS:
        return None, f"longer than {MAX_CHARS} characters"
    found = _DIRECTION.search(text)
    if found:
        return None, f"direction word {found.group(0)!r}"
    lowered = text.lower()
    absent = [n for n in (prompt.person_a, prompt.person_b) if n.lower() not in lowered]
    if absent:
        return None, f"does not name {' and '.join(absent)}"
    if not text.endswith("?"):
        return None, "not a question"
    return text, "kept"


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    firsts = [rewrite_prompt(p, kit) for p in prompts]
    replies = send(backend, firsts, kit.decoding(decoding, "rewrite"))
    seconds, notes = [], []
    for p, reply in zip(prompts, replies, strict=True):
        question, why = checked(p, reply)
        part = kit.parts(p)
        if question is None:
            question = kit.parts(p, framing="neutral").question
            notes.append(f"{REJECTED}: {why}")
        else:
            notes.append("")
        text = kit.lay_out(p.condition.position, question, part.context, part.instructions)
        seconds.append(turn_prompt(p, [user(text)], "label"))
    fmt = prompts[0].condition.format if prompts else "one-word"
    answered = send(backend, seconds, kit.decoding(decoding, fmt), on_response)
    out = []
    for first, reply, second, answer, note in zip(firsts, replies, seconds, answered, notes, strict=True):
        turns = (Turn("rewrite", first, reply), Turn("label", second, answer))
        if answer.error is not None:
            out.append(ProtocolAnswer(error_prediction(answer), turns, fmt, note))
            continue
        out.append(ProtocolAnswer(formats.read(second, answer, fmt), turns, fmt, note))
    return out
