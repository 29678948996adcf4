"""Reasoning then JSON: the last object's `answer`; a reply that wrote prose instead is read as CoT."""

from __future__ import annotations

from . import cot, json_answer
from .context import Context
from .outcome import Reading


def read(text: str, context: Context) -> Reading:
    reading = json_answer.read(text, context)
    if reading.label is not None or not reading.rule.startswith("invalid: no JSON object"):
        return reading
    prose = cot.read(text, context)
    if prose.label is None:
        return Reading.invalid(
            f"{reading.rule.removeprefix('invalid: ')}, and {prose.rule.removeprefix('invalid: ')}"
        )
    return Reading(prose.label, f"prose without JSON, {prose.rule}")
