"""One case: every scenario under one condition, asked, read, scored and held to its ceilings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import answers, metrics
from .backends.base import Backend
from .thresholds import Ceilings
from .types import LABELS, Condition, Decoding, Prediction, Prompt, Response

_TAIL = 160


@dataclass(frozen=True)
class Item:
    prompt: Prompt
    response: Response
    prediction: Prediction

    @property
    def wrong(self) -> bool:
        """Answered, and not with the gold label (failed requests are errors, not wrong answers)."""
        return self.prediction.status != "error" and self.prediction.label != self.prompt.scenario.label

    def record(self, run_id: str, model: str, revision: str) -> dict[str, Any]:
        """One line of results.jsonl: enough to recompute any paired metric later."""
        s, c = self.prompt.scenario, self.prompt.condition
        return {
            "run_id": run_id,
            "case": c.id,
            "framing": c.framing,
            "position": c.position,
            "identity": c.identity,
            "format": c.format,
            "prompt_set": self.prompt.prompt_set,
            "scenario": s.id,
            "category": s.category,
            "quantity": s.quantity,
            "gold": s.label,
            "model": model,
            "revision": revision,
            "prompt": self.prompt.text,
            "raw": self.response.text,
            "label": self.prediction.label,
            "status": self.prediction.status,
            "error": self.response.error,
            "cached": self.response.cached,
            "input_tokens": self.response.input_tokens,
            "output_tokens": self.response.output_tokens,
            "probs": self.response.meta.get("probs"),
            "cost": self.response.meta.get("cost"),
        }


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

    @property
    def breaches(self) -> list[str]:
        out = []
        for y in LABELS:
            value = self.scores.dir_err[y]
            if value is not None and value > self.ceilings.dir_err[y]:
                out.append(f"DirErr({y})")
        if self.scores.invalid_rate > self.ceilings.invalid_rate:
            out.append("invalid_rate")
        if self.scores.error_rate > self.ceilings.error_rate:
            out.append("error_rate")
        return out

    @property
    def passed(self) -> bool:
        return not self.breaches

    def explanation(self) -> str:
        """What a failing case prints: every value against its ceiling, then three wrong items."""
        table = self.scores.confusion
        lines = [
            f"{self.condition.id} on {self.model}: {', '.join(self.breaches) or 'nothing'} above the ceiling"
        ]
        for y in LABELS:
            value = self.scores.dir_err[y]
            hits, denominator = metrics.dir_err_counts(table, y)
            shown = "n/a" if value is None else f"{value:.3f}"
            mark = ">" if value is not None and value > self.ceilings.dir_err[y] else "<="
            lines.append(
                f"  DirErr({y:<5}) = {shown} {mark} {self.ceilings.dir_err[y]:.3f}"
                f"   ({hits}/{denominator} items whose gold is not {y} answered {y})"
            )
        for name in ("invalid_rate", "error_rate"):
            value, ceiling = getattr(self.scores, name), getattr(self.ceilings, name)
            lines.append(f"  {name:<14} = {value:.3f} {'>' if value > ceiling else '<='} {ceiling:.3f}")
        wrong = [i for i in self.items if i.wrong][:3]
        if wrong:
            lines.append("three wrong items:" if len(wrong) == 3 else "wrong items:")
        for item in wrong:
            tail = item.prompt.text[-_TAIL:].replace("\n", " ")
            lines.append(
                f"  scenario {item.prompt.scenario.id}: gold {item.prompt.scenario.label}, "
                f"read {item.prediction.label or item.prediction.status}, raw answer {item.response.text!r}"
            )
            lines.append(f"    prompt ends: ...{tail!r}")
        return "\n".join(lines)

    def usage(self) -> dict[str, float | int | None]:
        """Tokens in and out over this case's items, and cost where the provider's price is known."""
        costs = [i.response.meta.get("cost") for i in self.items]
        known = [float(c) for c in costs if isinstance(c, (int, float))]
        return {
            "input_tokens": sum(i.response.input_tokens or 0 for i in self.items),
            "output_tokens": sum(i.response.output_tokens or 0 for i in self.items),
            "cost_usd": sum(known) if known else None,
        }

    def summary(self) -> dict[str, Any]:
        """Plain JSON for the test report (travels from xdist workers) and summary.json."""
        return {
            "case": self.condition.id,
            "framing": self.condition.framing,
            "position": self.condition.position,
            "identity": self.condition.identity,
            "format": self.condition.format,
            "model": self.model,
            "revision": self.revision,
            "passed": self.passed,
            "breaches": self.breaches,
            "scores": self.scores.as_dict(),
            "ceilings": self.ceilings.as_dict(),
            "sent": self.sent,
            "usage": self.usage(),
            "examples": [
                {
                    "scenario": i.prompt.scenario.id,
                    "gold": i.prompt.scenario.label,
                    "read": i.prediction.label or i.prediction.status,
                    "raw": i.response.text[:2000],
                    "prompt_tail": i.prompt.text[-_TAIL:],
                }
                for i in self.items
                if i.wrong
            ][:3],
        }


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
