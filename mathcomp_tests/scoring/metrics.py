"""Scores for one case: confusion matrix, DirErr per label, accuracy, invalid and error rates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from ..types import LABELS, Label, Prediction
from .intervals import wilson

OUTCOMES: tuple[str, ...] = (*LABELS, "invalid", "error")


@dataclass(frozen=True)
class Scores:
    n: int
    confusion: dict[str, dict[str, int]]  # gold label -> predicted outcome -> count
    dir_err: dict[str, float | None]  # None when every item has gold y (no denominator)
    accuracy: float
    invalid_rate: float
    error_rate: float
    soft_dir_err: dict[str, float | None] | None = None
    """Expected DirErr from label probabilities (logprob scoring): lower variance than the hard count."""
    dir_err_ci: dict[str, tuple[float, float] | None] | None = None
    """95% Wilson interval of each DirErr(y) (the case's items are distinct scenarios)."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def confusion(golds: Sequence[Label], predictions: Sequence[Prediction]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {g: dict.fromkeys(OUTCOMES, 0) for g in LABELS}
    for gold, pred in zip(golds, predictions, strict=True):
        outcome = pred.label if pred.status == "ok" and pred.label else pred.status
        table[gold][outcome] += 1
    return table


def dir_err_counts(table: dict[str, dict[str, int]], label: str) -> tuple[int, int]:
    """(items answered ``label`` whose gold is not ``label``, items whose gold is not ``label``).

    Unreadable answers stay in the denominator (the model answered, badly); failed requests leave it
    (the model never answered) and are counted by the error rate instead.
    """
    others = [g for g in LABELS if g != label]
    denominator = sum(sum(table[g].values()) - table[g]["error"] for g in others)
    return sum(table[g][label] for g in others), denominator


def dir_err(table: dict[str, dict[str, int]], label: str) -> float | None:
    """DirErr(y): among items whose gold label is not y, the share answered y."""
    hits, denominator = dir_err_counts(table, label)
    return hits / denominator if denominator else None


def soft_dir_err(golds: Sequence[Label], probs: Sequence[Mapping[str, float]], label: str) -> float | None:
    """Mean probability of ``label`` over items whose gold label is not ``label``."""
    values = [p[label] for g, p in zip(golds, probs, strict=True) if g != label]
    return sum(values) / len(values) if values else None


def score(
    golds: Sequence[Label],
    predictions: Sequence[Prediction],
    probs: Sequence[Mapping[str, float]] | None = None,
) -> Scores:
    soft: dict[str, float | None] | None = (
        {y: soft_dir_err(golds, probs, y) for y in LABELS} if probs is not None else None
    )
    return from_table(confusion(golds, predictions), soft)


def from_table(table: dict[str, dict[str, int]], soft: Mapping[str, float | None] | None = None) -> Scores:
    """The scores of a confusion table (gold label -> outcome -> count), with soft DirErr when given."""
    n = sum(sum(row.values()) for row in table.values())
    if n == 0:
        raise ValueError("cannot score a case with no items")
    correct = sum(table[g][g] for g in LABELS)
    invalid = sum(table[g]["invalid"] for g in LABELS)
    errors = sum(table[g]["error"] for g in LABELS)
    return Scores(
        n=n,
        confusion=table,
        dir_err={y: dir_err(table, y) for y in LABELS},
        accuracy=correct / n,
        invalid_rate=invalid / n,
        error_rate=errors / n,
        soft_dir_err=None if soft is None else dict(soft),
        dir_err_ci={y: wilson(*dir_err_counts(table, y)) for y in LABELS},
    )


class HasCeilings(Protocol):
    @property
    def dir_err(self) -> dict[str, float]: ...
    @property
    def invalid_rate(self) -> float: ...
    @property
    def error_rate(self) -> float: ...


@dataclass(frozen=True)
class Metric:
    """One gated number of a case, declared once: the verdict holds it to its ceiling, and the records,
    the terminal table and the report show it under ``name``."""

    name: str
    label: str | None = None
    """The label of a DirErr metric; None for a rate."""
    rate: str = ""
    """The Scores attribute of a rate metric (``invalid_rate``, ``error_rate``)."""

    def value(self, scores: Scores) -> float | None:
        return scores.dir_err[self.label] if self.label else float(getattr(scores, self.rate))

    def ceiling(self, ceilings: HasCeilings) -> float:
        return ceilings.dir_err[self.label] if self.label else float(getattr(ceilings, self.rate))

    def over(self, value: float | None, ceilings: HasCeilings) -> bool:
        return value is not None and value > self.ceiling(ceilings)


CASE_METRICS: tuple[Metric, ...] = (
    *(Metric(f"DirErr({y})", label=y) for y in LABELS),
    Metric("invalid_rate", rate="invalid_rate"),
    Metric("error_rate", rate="error_rate"),
)
"""Every number a case is held to, in the order messages and tables show them."""


def percent(value: float | None, digits: int = 1, missing: str = "n/a") -> str:
    """A share as the reports and the terminal write it: ``12.5%``, or ``missing`` when undefined."""
    return missing if value is None else f"{100 * value:.{digits}f}%"
