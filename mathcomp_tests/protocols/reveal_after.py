"""Reveal-After (seed 002): a measurement of how answers move when a wrong cue is replaced by the true one.

Not a mitigation and so not a ``--protocol`` value: its cue depends on each item's gold label, which no
framing case has. It runs as its own opt-in test (suite/test_reveal_after.py, ``--reveal-after``), one
case per position x identity x format. For each item, turn 1 asks under a Flip cue (the direct question
naming a wrong label: more for a less item, less for a more item, more or less for an equal item by a
stable hash of its id); turn 2, in the same conversation, asks again under the Truth cue (the direct
question naming the gold label). The neutral answer is the plain neutral prompt (the neutral case's own
request, shared through the cache). A model that tracks content answers the same three times.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .. import formats
from ..backends.base import Backend
from ..prompts import build
from ..types import Decoding, Label, Message, Prediction, Prompt, Turn
from .base import Kit, send, turn_prompt, user


@dataclass(frozen=True)
class RevealAnswer:
    prompt: Prompt
    """The neutral prompt (the item's scenario, the case's position, identity and format)."""
    flip: Label
    truth: Label
    first: Prediction
    """Under the Flip cue (turn 1)."""
    second: Prediction
    """Under the Truth cue, in the same conversation (turn 2)."""
    neutral: Prediction
    turns: tuple[Turn, ...]


def flip_label(prompt: Prompt) -> Label:
    gold = prompt.scenario.label
    if gold == "less":
        return "more"
    if gold == "more":
        return "less"
    return "more" if zlib.crc32(prompt.scenario.id.encode()) % 2 else "less"


def _cued(prompt: Prompt, label: str, kit: Kit) -> Prompt:
    condition = replace(prompt.condition, framing=f"direct-{label}")
    return build(prompt.scenario, condition, kit.prompt_set, kit.names(condition))


def second_prompt(prompt: Prompt, first: Turn, kit: Kit) -> Prompt:
    """Turn 2: the conversation so far, then the Truth-cued question with the format's instructions."""
    part = kit.parts(prompt, framing=f"direct-{prompt.scenario.label}")
    again = user(part.question + part.instructions)
    messages = [*first.prompt.messages, Message("assistant", first.response.text), again]
    return turn_prompt(prompt, messages, "label")


def _read(prompt: Prompt, turn: Turn) -> Prediction:
    return formats.read(turn.prompt, turn.response, prompt.condition.format)


def ask(prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, kit: Kit) -> list[RevealAnswer]:
    """``prompts``: the neutral prompts of one position x identity x format."""
    neutral = send(backend, prompts, decoding)
    firsts_asked = [_cued(p, flip_label(p), kit) for p in prompts]
    replies_1 = send(backend, firsts_asked, decoding)
    firsts = [Turn("flip", q, r) for q, r in zip(firsts_asked, replies_1, strict=True)]
    live = [n for n, t in enumerate(firsts) if t.response.error is None]
    seconds_asked = [second_prompt(prompts[n], firsts[n], kit) for n in live]
    replies = dict(zip(live, send(backend, seconds_asked, decoding), strict=True))
    asked = dict(zip(live, seconds_asked, strict=True))
    out = []
    for n, p in enumerate(prompts):
        plain = Turn("neutral", p, neutral[n])
        first = firsts[n]
        if n in replies:
            second = Turn("truth", asked[n], replies[n])
            turns: tuple[Turn, ...] = (plain, first, second)
            second_read = _read(p, second)
        else:
            turns = (plain, first)
            second_read = Prediction(None, "error", "", "error: turn 1 failed, turn 2 not asked")
        out.append(
            RevealAnswer(p, flip_label(p), p.scenario.label, _read(p, first), second_read, _read(p, plain), turns)
        )
    return out


def summarise(got: Sequence[RevealAnswer]) -> dict[str, Any]:
    """Shares over the items whose three answers were all read (the rest are counted as unread)."""
    read = [a for a in got if all(x.status == "ok" for x in (a.first, a.second, a.neutral))]
    n = len(read)

    def share(test: Callable[[RevealAnswer], bool]) -> float | None:
        return sum(1 for a in read if test(a)) / n if n else None

    return {
        "items": len(got),
        "read": n,
        "unread": len(got) - n,
        "errors": sum(1 for a in got if "error" in (a.first.status, a.second.status, a.neutral.status)),
        "first_follows_flip": share(lambda a: a.first.label == a.flip),
        "second_follows_truth": share(lambda a: a.second.label == a.truth),
        "second_keeps_first": share(lambda a: a.second.label == a.first.label),
        "first_matches_neutral": share(lambda a: a.first.label == a.neutral.label),
        "second_matches_neutral": share(lambda a: a.second.label == a.neutral.label),
        "all_three_same": share(lambda a: a.first.label == a.second.label == a.neutral.label),
        "neutral_correct": share(lambda a: a.neutral.label == a.truth),
    }


def record(answer: RevealAnswer, case: str, run_id: str) -> dict[str, object]:
    """One line of reveal-after/results.jsonl: the three answers as read and every turn's raw text."""
    return {
        "run_id": run_id,
        "case": case,
        "scenario": answer.prompt.scenario.id,
        "sample": 0,
        "gold": answer.truth,
        "flip": answer.flip,
        **{
            f"{name}_{field}": getattr(getattr(answer, name), field)
            for name in ("neutral", "first", "second")
            for field in ("label", "status", "decided_by")
        },
        "turns": [
            {
                "turn": t.name,
                "messages": [{"role": m.role, "content": m.content} for m in t.prompt.messages],
                "raw": t.response.text,
                "error": t.response.error,
                "cached": t.response.cached,
                "input_tokens": t.response.input_tokens,
                "output_tokens": t.response.output_tokens,
            }
            for t in answer.turns
        ],
    }
