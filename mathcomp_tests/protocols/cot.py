"""cot: the case's prompt with its format's chain-of-thought instructions, one request.

one-word becomes cot and json becomes cot-json (the paper's two CoT settings); cot and cot-json stay as
they are, so under --formats=cot the cot protocol asks exactly what plain asks (and shares its cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .. import formats
from ..backends.base import Backend, OnResponse
from ..prompts import build
from ..types import Decoding, Prompt, Turn
from .base import Kit, ProtocolAnswer


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    asked = []
    for p in prompts:
        condition = replace(p.condition, format=formats.get(p.condition.format).cot)
        built = build(p.scenario, condition, kit.prompt_set, kit.names(condition))
        asked.append(built)
    fmt = asked[0].condition.format if asked else "cot"
    responses = backend.complete(asked, kit.decoding(decoding, fmt), on_response)
    return [
        ProtocolAnswer(
            formats.read(q, r), (Turn("answer", q, r),), q.condition.format
        )
        for q, r in zip(asked, responses, strict=True)
    ]
