"""plain: the prompt as the authors ran it, one request, read in the case's format (today's behaviour)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import formats
from ..backends.base import Backend, OnResponse
from ..types import Decoding, Prompt, Turn
from .base import Kit, ProtocolAnswer


def ask(
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit, on_response: OnResponse | None = None
) -> list[ProtocolAnswer]:
    responses = backend.complete(list(prompts), decoding, on_response)
    return [
        ProtocolAnswer(
            formats.read(p, r),
            (Turn("answer", p, r),),
            p.condition.format,
        )
        for p, r in zip(prompts, responses, strict=True)
    ]
