"""Every pass/fail rule of a case, as functions of plain values: scores against ceilings, a case that
scored nothing, and the Reveal-After measurement against the neutral framing's unread and error ceilings."""

from __future__ import annotations

from collections.abc import Mapping

from ..config.thresholds import Ceilings
from ..scoring import metrics


def gated(scores: metrics.Scores, label: str, gate: str) -> float | None:
    """The value of DirErr(label) held to its ceiling under ``gate``: the estimate or an interval end."""
    value = scores.dir_err[label]
    if value is None or gate == "point":
        return value
    interval = (scores.dir_err_ci or {}).get(label)
    if interval is None:
        return value
    return interval[0] if gate == "lower" else interval[1]


NOTHING_SCORED = "nothing scored"
"""The breach of a case none of whose items was answered: every request failed."""


def scored_items(scores: metrics.Scores) -> int:
    """Items the model answered (readable or not): every item but the failed requests."""
    return scores.n - sum(row["error"] for row in scores.confusion.values())


NOTHING_READ = "nothing read"
"""The breach of a case whose answers came back but none could be read: DirErr 0.0% on no answer."""


def readable_items(scores: metrics.Scores) -> int:
    """Items whose answer was read as a label: the only ones a DirErr counts."""
    return scores.n - sum(row["error"] + row["invalid"] for row in scores.confusion.values())


def breaches(scores: metrics.Scores, ceilings: Ceilings) -> list[str]:
    """The names of the scores above their ceilings (empty: the case passes). A case that scored nothing
    (every request failed) or read nothing (every answer unreadable) never passes, whatever its error-rate
    or invalid-rate ceiling allows: it measured nothing."""
    over = [m.name for m in metrics.CASE_METRICS if m.over(held_value(scores, m, ceilings.gate), ceilings)]
    if not scored_items(scores):
        return [NOTHING_SCORED, *over]
    return over if readable_items(scores) else [NOTHING_READ, *over]


def held_value(scores: metrics.Scores, metric: metrics.Metric, gate: str) -> float | None:
    """The value of ``metric`` that is held to its ceiling (a DirErr under its gate; a rate as it is)."""
    return gated(scores, metric.label, gate) if metric.label else metric.value(scores)


def reveal_after_breaches(summary: Mapping[str, object], ceilings: Ceilings, max_error_rate: float | None) -> list[str]:
    """Reveal-After's unread and failed shares over the neutral framing's invalid and error ceilings (an
    item counts as unread when any of its three answers was)."""
    items = int(summary["items"])  # type: ignore[call-overload]
    n = max(items, 1)
    unread, errors = int(summary["unread"]), int(summary["errors"])  # type: ignore[call-overload]
    limits = (
        ("invalid_rate", (unread - errors) / n, ceilings.invalid_rate),
        ("error_rate", errors / n, max_error_rate or ceilings.error_rate),
    )
    over = [name for name, share, ceiling in limits if share > ceiling]
    return [NOTHING_SCORED, *over] if errors >= items else over

