"""Numbers that pool cases: overall rates, the cells that failed or changed, and DirErr per scenario category with a
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


def worst_cells(cases: Sequence[Mapping[str, Any]], n: int = 3) -> tuple[list[str], int]:
    """The ``n`` worst DirErr cells that failed or changed, described, and how many there are in all.

    A cell (a case and a label) counts once when it is over its ceiling or changed significantly against
    the baseline; cells that fail their case come first, each kind by how far it went (over the ceiling,
    or the change). A cell at 100% that passes and did not change is not news and is left out.
    """
    found: list[tuple[bool, float, str]] = []
    for c in scored(cases):
        breaches = set(c.get("breaches") or [])
        comparison = c.get("baseline") or {}
        changes = comparison.get("changes", {}) if comparison.get("status") == "compared" else {}
        for y in LABELS:
            value = c["scores"]["dir_err"].get(y)
            ceiling = c["ceilings"]["dir_err"][y]
            said, fails, size = [], False, 0.0
            if f"DirErr({y})" in breaches and value is not None:
                said.append(f"{100 * value:.1f}% over its ceiling {100 * ceiling:.1f}%")
                fails, size = True, value - ceiling
            change = changes.get(y) or {}
            d = change.get("difference")
            if d is not None and change.get("significant"):
                rose = " (over its max increase)" if change.get("breach") else ""
                said.append(f"{100 * d:+.1f} points against the baseline (p={change['p_value']:.2g}){rose}")
                fails, size = fails or bool(change.get("breach")), max(size, abs(d))
            if said:
                found.append((fails, size, f"{c['case']} DirErr({y}) " + ", ".join(said)))
    ordered = [text for _, _, text in sorted(found, key=lambda f: (not f[0], -f[1]))]
    return ordered[:n], len(ordered)


Answers = Mapping[str, Mapping[str, str]]
"""A baseline's answers: case -> scenario -> less, more, equal, invalid or error."""


def by_category(
    records: Iterable[Mapping[str, Any]], baseline: Answers | None = None
) -> dict[str, dict[str, tuple[float, float, float] | None]]:
    """category -> label -> (pooled DirErr, low, high): failed requests left out, as in DirErr itself.

    With ``baseline``, the same for the baseline's answers on the same items (those both answered).
    """
    rows = []
    for r in records:
        answer = str(r["label"]) if r["status"] == "ok" else str(r["status"])
        if baseline is not None:
            answer = str(baseline.get(str(r["case"]), {}).get(str(r["scenario"]), "error"))
            if r["status"] == "error":
                continue
        if answer == "error":
            continue
        rows.append((str(r["category"]), str(r["scenario"]), str(r["gold"]), answer))
    return _pooled(rows)


def _pooled(
    rows: Iterable[tuple[str, str, str, str]],
) -> dict[str, dict[str, tuple[float, float, float] | None]]:
    clusters: dict[str, dict[str, dict[str, list[tuple[int, int]]]]] = {}
    for category, scenario, gold, answer in rows:
        for y in LABELS:
            if gold == y:
                continue
            per_label = clusters.setdefault(category, {}).setdefault(y, {})
            per_label.setdefault(scenario, []).append((int(answer == y), 1))
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
