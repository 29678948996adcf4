"""One case: every scenario under one condition, asked through its protocol, read, judged and scored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .. import formats
from ..backends.base import Backend, OnResponse
from ..config.thresholds import Ceilings
from ..protocols import ASK, Kit, ProtocolAnswer
from ..protocols.judge import JUDGE, Judge
from ..scoring import metrics
from ..types import PLAIN, Decoding, Item, Prompt
from ..verdict.result import CaseResult


def run_case(
    prompts: Sequence[Prompt],
    backend: Backend,
    decoding: Decoding | Sequence[Decoding],
    ceilings: Ceilings,
    kit: Kit,
    judge: Judge | None = None,
    on_response: OnResponse | None = None,
) -> CaseResult:
    """Ask for all prompts at once through the condition's protocol (plain: one request each; the
    backend batches or fans out), then read and score them.

    With a judge, chain-of-thought answers the rules declined are decided by the judge. With several
    decodings (one per sample), every sample is asked and read; ``scores`` pools them (pooled DirErr is
    the mean of the samples' DirErr: every sample has the same gold labels) and each is kept apart.
    ``on_response`` sees each response as it arrives (progress display)."""
    if not prompts:
        raise ValueError("a case needs at least one prompt")
    decodings = [decoding] if isinstance(decoding, Decoding) else list(decoding)
    condition = prompts[0].condition
    ask = ASK[condition.protocol]
    before = getattr(backend, "calls", 0)
    judge_before = getattr(judge.backend, "calls", 0) if judge is not None else 0
    items: list[Item] = []
    for n, sampled in enumerate(decodings):
        got = ask(prompts, backend, sampled, kit, on_response)
        asked = tuple(_item(p, a, n, condition.protocol) for p, a in zip(prompts, got, strict=True))
        items.extend(_judged(asked, judge) if judge is not None else asked)
    sent = getattr(backend, "calls", 0) - before
    judge_sent = getattr(judge.backend, "calls", 0) - judge_before if judge is not None else 0
    per_sample = tuple(_score([i for i in items if i.sample == n]) for n in range(len(decodings)))
    return CaseResult(
        condition,
        backend.model_id,
        backend.revision,
        tuple(items),
        _score(items),
        ceilings,
        sent,
        per_sample if len(decodings) > 1 else (),
        judge_sent,
        chat_template=getattr(backend, "applied_chat_template", None),
    )


def _item(prompt: Prompt, answer: ProtocolAnswer, sample: int, protocol: str) -> Item:
    """A plain answer is its one response; another protocol's keeps every turn it sent."""
    last = answer.turns[-1].response
    if protocol == PLAIN:
        return Item(prompt, last, answer.prediction, sample=sample)
    return Item(prompt, last, answer.prediction, None, sample, answer.turns, answer.note, answer.read_as)


def read_format(item: Item) -> str:
    """The format the item's label was read in (what a judge would be asked to decide)."""
    return item.read_as or (item.prompt.condition.format if not item.turns else "")


def _judged_format(name: str) -> bool:
    return name in formats.FORMATS and formats.FORMATS[name].judged


def _score(items: Sequence[Item]) -> metrics.Scores:
    probs = [None if i.turns else i.response.meta.get("probs") for i in items]
    return metrics.score(
        [i.prompt.scenario.label for i in items],
        [i.prediction for i in items],
        probs if all(isinstance(p, dict) for p in probs) else None,  # type: ignore[arg-type]
    )


def _judged(items: tuple[Item, ...], judge: Judge) -> tuple[Item, ...]:
    declined = [
        n
        for n, i in enumerate(items)
        if i.prediction.status == "invalid" and _judged_format(read_format(i))
    ]
    verdicts = judge.decide([(items[n].prompt, items[n].response.text) for n in declined])
    out = list(items)
    for n, said in zip(declined, verdicts, strict=True):
        item = items[n]
        if said.label is not None:
            prediction = replace(item.prediction, label=said.label, status="ok", decided_by=JUDGE)
        else:
            why = said.reply.error or f"judge replied {said.reply.text[:40]!r}"
            prediction = replace(item.prediction, decided_by=f"{item.prediction.decided_by}; {why}")
        out[n] = replace(item, prediction=prediction, judge_reply=said.reply)
    return tuple(out)
