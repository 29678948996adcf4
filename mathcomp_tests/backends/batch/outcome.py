"""What the batches did: per call (``Outcome``), and for the run as summary.json's `batch` section says it
(``BatchSummary``: one process's, or an xdist controller's adding up its workers')."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ...types import Response


@dataclass
class Outcome:
    """What the batches did for one call, or (summed) for the run."""

    answered: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)
    """Cache key -> the error of a request no batch answered (after every resend)."""
    created: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    requests_sent: int = 0
    cost_usd: float = 0.0
    """What the answers collected cost at the batch price (where the price is known)."""
    live_cost_usd: float = 0.0
    """What the same answers would have cost as live requests."""

    def paid(self, answers: Sequence[Response]) -> None:
        """Add what ``answers`` cost, and would have cost live (where priced)."""
        for response in answers:
            cost, live = response.meta.get("cost"), response.meta.get("live_cost")
            if isinstance(cost, float) and isinstance(live, float):
                self.cost_usd += cost
                self.live_cost_usd += live

    def add(self, other: Outcome) -> None:
        """``other`` (a later call) added: an answer clears an earlier failure of the same request."""
        self.answered |= other.answered
        kept = {k: v for k, v in self.failed.items() if k not in other.answered}
        self.failed = {**kept, **other.failed}
        self.created += other.created
        self.resumed += other.resumed
        self.requests_sent += other.requests_sent
        self.cost_usd += other.cost_usd
        self.live_cost_usd += other.live_cost_usd


@dataclass(frozen=True)
class BatchSummary:
    """summary.json's `batch`: what was sent and collected by batch, and what it cost (None: not priced)."""

    batches_created: tuple[str, ...]
    batches_resumed: tuple[str, ...]
    requests_sent: int
    answered: int
    failed: int
    pricing: str
    cost_usd: float | None
    live_cost_usd: float | None
    saved_usd: float | None

    @classmethod
    def of(cls, total: Outcome, pricing: str) -> BatchSummary:
        known = bool(total.live_cost_usd)
        return cls(
            tuple(total.created),
            tuple(total.resumed),
            total.requests_sent,
            len(total.answered),
            len(total.failed),
            pricing,
            total.cost_usd if known else None,
            total.live_cost_usd if known else None,
            total.live_cost_usd - total.cost_usd if known else None,
        )

    def as_dict(self) -> dict[str, Any]:
        """The section as summary.json writes it (lists for the batch ids)."""
        out = asdict(self)
        out["batches_created"], out["batches_resumed"] = list(self.batches_created), list(self.batches_resumed)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchSummary:
        """A section ``as_dict`` wrote (an xdist worker's, sent to the controller)."""
        return cls(**{**data, "batches_created": tuple(data["batches_created"]),
                      "batches_resumed": tuple(data["batches_resumed"])})

    @classmethod
    def added(cls, parts: Sequence[BatchSummary]) -> BatchSummary | None:
        """Several processes' sections as one: batches listed once, counts and costs summed (a cost is None
        when a process that collected answers could not price them, as in one process); None for none."""
        if not parts:
            return None
        created = tuple(b for p in parts for b in p.batches_created)
        resumed = tuple(sorted({b for p in parts for b in p.batches_resumed} - set(created)))
        paid = [p for p in parts if p.answered]  # a process that collected nothing has no price to say

        def cost(name: str) -> float | None:
            values = [getattr(p, name) for p in paid]
            return None if not values or any(v is None for v in values) else float(sum(values))

        return cls(
            created,
            resumed,
            sum(p.requests_sent for p in parts),
            sum(p.answered for p in parts),
            sum(p.failed for p in parts),
            next((p.pricing for p in parts if p.pricing), ""),
            cost("cost_usd"),
            cost("live_cost_usd"),
            cost("saved_usd"),
        )
