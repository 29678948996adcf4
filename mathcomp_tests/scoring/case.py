"""One case: every scenario under one condition, asked, read and scored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..backends.base import Backend
from ..types import Condition, Decoding, Prediction, Prompt, Response
from . import answers, metrics, verdict
from .paired import Comparison
from .thresholds import Ceilings


@dataclass(frozen=True)
class Item:
    prompt: Prompt
    response: Response
    prediction: Prediction

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
    prompts: Sequence[Prompt], backend: Backend, decoding: Decoding, ceilings: Ceilings
) -> CaseResult:
    """Ask for all prompts at once (the backend batches or fans out), then read and score them."""
    before = getattr(backend, "calls", 0)
    responses = backend.complete(prompts, decoding)
    sent = getattr(backend, "calls", 0) - before
    items = tuple(
        Item(p, r, answers.parse(r, p.condition.format)) for p, r in zip(prompts, responses, strict=True)
    )
    probs = [i.response.meta.get("probs") for i in items]
    scores = metrics.score(
        [i.prompt.scenario.label for i in items],
        [i.prediction for i in items],
        probs if all(isinstance(p, dict) for p in probs) else None,  # type: ignore[arg-type]
    )
    condition = prompts[0].condition
    return CaseResult(condition, backend.model_id, backend.revision, items, scores, ceilings, sent)
