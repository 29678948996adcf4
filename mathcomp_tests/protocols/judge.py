"""The paper's judge: a second model decides the chain-of-thought answers the reading rules decline.

The judge sees the answer and the neutral question (prompts.toml [judge], the seed papers' Table 8),
never the framing cue. Its requests go through a backend and the response cache like any other.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .. import formats
from ..backends.base import Backend
from ..paths import fixtures
from ..prompts import PromptConfigError
from ..types import Decoding, Label, Message, Prompt, Response

JUDGED_FORMATS = tuple(name for name, f in formats.FORMATS.items() if f.judged)
JUDGE = "judge"
"""`decided_by` of a label the judge gave."""
CHAT_TEMPLATE = "auto"
"""The judge is asked with its own chat template whatever --chat-template says: that option is how the
case's prompts reach the model under test, and the judge's prompt is not a case's prompt."""


@dataclass(frozen=True)
class JudgeTemplate:
    system: str
    question: str
    user: str
    max_new_tokens: int
    quantity_words: dict[str, str]


def load_template(path: Path | None = None) -> JudgeTemplate:
    path = path or fixtures() / "prompts.toml"
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    table = data.get("judge")
    if not isinstance(table, dict):
        raise PromptConfigError(f"{path}: no [judge] table (system, question, user, max_new_tokens)")
    missing = [k for k in ("system", "question", "user") if not isinstance(table.get(k), str)]
    if missing:
        raise PromptConfigError(f"{path}: [judge] lacks {', '.join(missing)}")
    return JudgeTemplate(
        system=table["system"],
        question=table["question"],
        user=table["user"],
        max_new_tokens=int(table.get("max_new_tokens", 8)),
        quantity_words=dict(data.get("quantity_words", {})),
    )


def judge_prompt(prompt: Prompt, response: str, template: JudgeTemplate) -> Prompt:
    """What the judge is asked about one answer: the answer, then the neutral question."""
    s = prompt.scenario
    question = template.question.format(
        studied_quantity=template.quantity_words.get(s.quantity, s.quantity),
        task=s.task,
        person_a=prompt.person_a,
        person_b=prompt.person_b,
    )
    user = template.user.format(response=response, question=question)
    messages = (Message("system", template.system), Message("user", user))
    return replace(prompt, messages=messages, prompt_set=JUDGE)


@dataclass(frozen=True)
class Verdict:
    label: Label | None
    reply: Response


class Judge:
    """Asks ``backend`` about each declined answer; reads its reply in the one-word format, against the
    case prompt's option letters and names (the judge is asked about the same persons)."""

    def __init__(self, backend: Backend, template: JudgeTemplate | None = None):
        self.backend = backend
        self.template = template or load_template()
        self.decoding = Decoding(max_new_tokens=self.template.max_new_tokens)

    def decide(self, asked: Sequence[tuple[Prompt, str]]) -> list[Verdict]:
        """One verdict per (case prompt, model answer), in order; a failed or unreadable reply is no label."""
        if not asked:
            return []
        prompts = [judge_prompt(p, text, self.template) for p, text in asked]
        replies = self.backend.complete(prompts, self.decoding)
        return [
            Verdict(formats.read(p, reply, "one-word").label, reply)
            for (p, _), reply in zip(asked, replies, strict=True)
        ]

    def close(self) -> None:
        self.backend.close()
