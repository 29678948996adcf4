"""Mitigation protocols: how a case's prompts are put to the model (``--protocol``).

Each protocol is a module with one function, ``ask`` (see base.py for its shape), registered in ``ASK``
below: a new protocol is its module and one line here. ``plain`` is today's
single request; the others add or replace turns and read the label their own way. docs/cue-invariance-and-protocols.md,
"Mitigation protocols".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..backends.base import Backend, OnResponse
from ..types import Decoding, Prompt, Turn
from . import canonicalize, cot, dual_direction, evidence_lock, plain, symbolic
from .base import Kit, ProtocolAnswer, load_texts

Ask = Callable[[Sequence[Prompt], Backend, Decoding, Kit, "OnResponse | None"], list[ProtocolAnswer]]

ASK: dict[str, Ask] = {
    "plain": plain.ask,
    "cot": cot.ask,
    "evidence-lock": evidence_lock.ask,
    "dual-direction": dual_direction.ask,
    "canonicalize": canonicalize.ask,
    "symbolic": symbolic.ask,
}
PROTOCOLS: tuple[str, ...] = tuple(ASK)
"""The registered protocols, in the order --protocol=all runs them."""

__all__ = ["ASK", "PROTOCOLS", "Ask", "Kit", "ProtocolAnswer", "Turn", "load_texts"]
