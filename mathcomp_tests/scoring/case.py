"""One case: every scenario under one condition, asked, read and scored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..backends.base import Backend, OnResponse
from ..protocols import ASK, Kit, ProtocolAnswer, Turn
from ..types import PLAIN, Condition, Decoding, Prediction, Prompt, Response
from . import answers, metrics, verdict
from .judge import JUDGE, JUDGED_FORMATS, Judge
from .paired import Comparison
from .thresholds import Ceilings


@dataclass(frozen=True)
class Item:
    prompt: Prompt
    response: Response
    prediction: Prediction
    judge_reply: Response | None = None
    """The judge's reply, when the rules declined this answer and a judge was asked."""
    sample: int = 0
    """Which of the case's samples (--samples) this answer is."""
    turns: tuple[Turn, ...] = ()
    """Every request a protocol other than plain sent for this item (``response`` is the last one's)."""
    note: str = ""
    """What the protocol noticed on this item (a disagreement, a rejected rewrite)."""
    read_as: str = ""
    """The format the label was read in, when a protocol read it in another than the case's."""

    @property
    def requests(self) -> tuple[Response, ...]:
        """Every response this item took (one under plain)."""
        return tuple(t.response for t in self.turns) or (self.response,)

    @property
    def wrong(self) -> bool:
        """Answered, and not with the gold label (failed requests are errors, not wrong answers)."""
        return self.prediction.status != "error" and self.prediction.label != self.prompt.scenario.label


@dataclass(frozen=True)
class CaseResult:
    condition: Condition
    model: str
    revision: str
    items: tuple[Item, ...]
    scores: metrics.Scores
    ceilings: Ceilings
    sent: int
    """Prompts of this case sent to the model (the rest came from the cache)."""
    sample_scores: tuple[metrics.Scores, ...] = ()
    """Scores of each sample when the case was sampled more than once (``scores`` pools them all)."""
    judge_sent: int = 0
    """Declined answers of this case sent to the judge model (the rest of its verdicts came from the cache)."""
    comparison: Comparison | None = None
    """This case against the baseline's answers on the same items, when a baseline was given."""
    baseline_status: str = "none"
    """none (no baseline asked for), compared, or no baseline (the baseline lacks this case)."""

    @property
    def breaches(self) -> list[str]:
        found = verdict.breaches(self.scores, self.ceilings)
        return found + (self.comparison.breaches if self.comparison else [])

    def outcomes(self) -> dict[str, str]:
        """scenario id -> less, more, equal, invalid or error."""
        return {i.prompt.scenario.id: i.prediction.label or i.prediction.status for i in self.items}

    def golds(self) -> dict[str, str]:
        return {i.prompt.scenario.id: i.prompt.scenario.label for i in self.items}

    @property
    def passed(self) -> bool:
        return not self.breaches

    def explanation(self) -> str:
        return verdict.explanation(self)

    def wrong_items(self, n: int) -> list[Item]:
        return [i for i in self.items if i.wrong][:n]


def run_case(
    prompts: Sequence[Prompt],
    backend: Backend,
    decoding: Decoding | Sequence[Decoding],
    ceilings: Ceilings,
    judge: Judge | None = None,
    on_response: OnResponse | None = None,
    kit: Kit | None = None,
) -> CaseResult:
    """Ask for all prompts at once (the backend batches or fans out), then read and score them.

    With a judge, chain-of-thought answers the rules declined are decided by the judge. With several
    decodings (one per sample), every sample is asked and read; ``scores`` pools them (pooled DirErr is
    the mean of the samples' DirErr: every sample has the same gold labels) and each is kept apart.
    ``on_response`` sees each response as it arrives (progress display). A condition's protocol other
    than plain asks through its module in mathcomp_tests/protocols, laid out with ``kit``."""
    decodings = [decoding] if isinstance(decoding, Decoding) else list(decoding)
    protocol = prompts[0].condition.protocol if prompts else PLAIN
    before = getattr(backend, "calls", 0)
    judge_before = getattr(judge.backend, "calls", 0) if judge is not None else 0
    items: list[Item] = []
    for n, sampled in enumerate(decodings):
        if protocol == PLAIN:
            responses = backend.complete(prompts, sampled, on_response)
            asked = tuple(
                Item(p, r, answers.parse(r, p.condition.format, answers.context_for(p)), sample=n)
                for p, r in zip(prompts, responses, strict=True)
            )
        else:
            if kit is None:
                raise ValueError(f"protocol {protocol!r} needs a Kit to lay out its turns")
            got = ASK[protocol](prompts, backend, sampled, kit, on_response)
            asked = tuple(_item(p, a, n) for p, a in zip(prompts, got, strict=True))
        items.extend(_judged(asked, judge) if judge is not None else asked)
    sent = getattr(backend, "calls", 0) - before
    judge_sent = getattr(judge.backend, "calls", 0) - judge_before if judge is not None else 0
    per_sample = tuple(_score([i for i in items if i.sample == n]) for n in range(len(decodings)))
    condition = prompts[0].condition
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
    )


def _item(prompt: Prompt, answer: ProtocolAnswer, sample: int) -> Item:
    last = answer.turns[-1].response
    return Item(prompt, last, answer.prediction, None, sample, answer.turns, answer.note, answer.read_as)


def read_format(item: Item) -> str:
    """The format the item's label was read in (what a judge would be asked to decide)."""
    return item.read_as or (item.prompt.condition.format if not item.turns else "")


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
        if i.prediction.status == "invalid" and read_format(i) in JUDGED_FORMATS
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
