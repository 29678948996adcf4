"""Numbers that pool cases: overall rates, the worst cells, and DirErr per scenario category with a
cluster bootstrap over scenarios (every case asks every scenario, so items are not independent)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..scoring.intervals import cluster_bootstrap
from ..types import LABELS


def scored(cases: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The cases that have scores (a case that raised has none)."""
    return [c for c in cases if c.get("scores") is not None]


def rates(cases: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Invalid and error rates over every item of every scored case."""
    cases = scored(cases)
    n = sum(c["scores"]["n"] for c in cases)
    if not n:
        return {"invalid_rate": None, "error_rate": None}
    return {
        name: sum(c["scores"][name] * c["scores"]["n"] for c in cases) / n
        for name in ("invalid_rate", "error_rate")
    }


def worst_cells(cases: Sequence[Mapping[str, Any]], n: int = 3) -> list[tuple[str, str, float]]:
    """The ``n`` highest DirErr values as (case, label, value)."""
    cases = scored(cases)
    cells: list[tuple[str, str, float]] = [
        (str(c["case"]), str(y), float(v))
        for c in cases
        for y in LABELS
        if (v := c["scores"]["dir_err"].get(y)) is not None
    ]
    return sorted(cells, key=lambda cell: -cell[2])[:n]


def by_category(
    records: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, tuple[float, float, float] | None]]:
    """category -> label -> (pooled DirErr, low, high): failed requests left out, as in DirErr itself."""
    clusters: dict[str, dict[str, dict[str, list[tuple[int, int]]]]] = {}
    for r in records:
        if r["status"] == "error":
            continue
        answer = r["label"] if r["status"] == "ok" else r["status"]
        for y in LABELS:
            if r["gold"] == y:
                continue
            per_label = clusters.setdefault(str(r["category"]), {}).setdefault(y, {})
            per_label.setdefault(str(r["scenario"]), []).append((int(answer == y), 1))
    out: dict[str, dict[str, tuple[float, float, float] | None]] = {}
    for category, labels in clusters.items():
        out[category] = {}
        for y in LABELS:
            scenarios = labels.get(y, {})
            hits = sum(h for pairs in scenarios.values() for h, _ in pairs)
            total = sum(m for pairs in scenarios.values() for _, m in pairs)
            interval = cluster_bootstrap(scenarios, reps=500) if total else None
            out[category][y] = (hits / total, *interval) if interval else None
    return out
