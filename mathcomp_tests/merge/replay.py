"""The shards' answers, asked again: a Backend that answers each prompt with the response a shard recorded
for it (results.jsonl: the prompt or every turn's messages, the raw text, the error, the token counts), and
one for the judge's recorded replies. The merged run asks them through the suite's own code (protocols,
reading, judging, scoring), so the merged summary is what the suite computes; no model is called.

A prompt no shard recorded an answer for raises NoAnswer: the merge is then INCOMPLETE, never guessed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..backends.base import NoAnswer, OnResponse
from ..types import Decoding, Prompt, Response

Key = tuple[str, int, tuple[str, ...]]
"""(scenario id, sample, the content of every message asked)."""


def _response(turn: Mapping[str, Any], meta: dict[str, object]) -> Response:
    return Response(
        text=str(turn.get("raw") or ""),
        error=turn.get("error"),
        cached=bool(turn.get("cached")),
        input_tokens=turn.get("input_tokens"),
        output_tokens=turn.get("output_tokens"),
        meta=meta,
    )


def _last_meta(record: Mapping[str, Any]) -> dict[str, object]:
    """What item_record read from the item's (last) response's meta."""
    meta: dict[str, object] = {}
    if "served_model" in record:
        meta["served_model"] = record["served_model"]
    if record.get("redacted"):
        meta["redacted"] = True
    return meta


class Answers:
    """Every recorded response of the shards, by what was asked."""

    def __init__(self, records: Iterable[Mapping[str, Any]]):
        self.by_key: dict[Key, Response] = {}
        self.model = ""
        self.revision = ""
        self.chat_template: str | None = None
        for record in records:
            self.add(record)

    def add(self, record: Mapping[str, Any]) -> None:
        scenario, sample = str(record["scenario"]), int(record.get("sample") or 0)
        if "model" in record and not self.model:
            self.model, self.revision = str(record["model"]), str(record.get("revision") or "")
            self.chat_template = record.get("chat_template")
        turns = record.get("turns")
        if not turns:  # a plain case: its one prompt is one user message
            meta = {**_last_meta(record)}
            for name in ("probs", "cost"):
                if record.get(name) is not None:
                    meta[name] = record[name]
            key: Key = (scenario, sample, (str(record["prompt"]),))
            self.by_key.setdefault(key, _response(record, meta))
            return
        for n, turn in enumerate(turns):
            meta = _last_meta(record) if n == len(turns) - 1 else {}
            if n == 0 and record.get("cost") is not None:
                meta["cost"] = record["cost"]  # the item's cost is the sum over its turns: kept once
            contents = tuple(str(m["content"]) for m in turn["messages"])
            self.by_key.setdefault((scenario, sample, contents), _response(turn, meta))

    def answer(self, prompt: Prompt, sample: int) -> Response:
        key = (prompt.scenario.id, sample, tuple(m.content for m in prompt.messages))
        found = self.by_key.get(key)
        if found is None:
            raise NoAnswer(
                f"no shard recorded an answer for case {prompt.condition.id}, scenario {prompt.scenario.id}"
                + (f", sample {sample}" if sample else "")
                + " (a shard that did not ask it: narrowed, or from another selection)"
            )
        return found


class ReplayBackend:
    """The model, answered from the shards' records (the Backend protocol)."""

    def __init__(self, answers: Answers, sample_of: Callable[[Decoding], int]):
        self.answers = answers
        self.model_id = answers.model
        self.revision = answers.revision
        self.applied_chat_template = answers.chat_template
        self._sample_of = sample_of

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        sample = self._sample_of(decoding)
        out = [self.answers.answer(p, sample) for p in prompts]
        if on_response is not None:
            for n, response in enumerate(out):
                on_response(n, response)
        return out

    def cache_identity(self) -> dict[str, object]:
        return {"replay": self.model_id, "revision": self.revision}

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def close(self) -> None:
        return None


class JudgeReplies:
    """The judge's recorded replies, by the judge prompt it was asked (rebuilt by ``judge_prompt``)."""

    def __init__(self) -> None:
        self.by_messages: dict[tuple[str, tuple[str, ...]], Response] = {}

    def add(self, asked: Prompt, reply: str) -> None:
        self.by_messages.setdefault(
            (asked.scenario.id, tuple(m.content for m in asked.messages)), Response(text=reply)
        )


class ReplayJudge:
    """The judge model, answered from the shards' records (the Backend protocol)."""

    def __init__(self, replies: JudgeReplies, model_id: str):
        self.replies = replies
        self.model_id = model_id
        self.revision = ""

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        out = []
        for prompt in prompts:
            found = self.replies.by_messages.get(
                (prompt.scenario.id, tuple(m.content for m in prompt.messages))
            )
            if found is None:
                raise NoAnswer(
                    f"no shard recorded the judge's reply for case {prompt.condition.id}, scenario {prompt.scenario.id}"
                )
            out.append(found)
        return out

    def cache_identity(self) -> dict[str, object]:
        return {"replay": self.model_id}

    def prompt_inputs(self, prompt: Prompt) -> dict[str, object]:
        return {}

    def close(self) -> None:
        return None
