"""New or known: does a failed case fail on the base too?

With a baseline, a failed case is *known* when the base fails it on the same ceilings: the base's own
answers to the case's items, scored and held to the ceilings this run holds the case to, breach every
ceiling the case breaches. Anything else is *new*: a rise over the baseline (the base cannot rise over
itself), a check of the project's own (the base was never checked), a case the baseline lacks, or a
ceiling the base stays under. Teams gate on new failures (``--fail-on=new``); known ones stay visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..config.thresholds import Ceilings
from ..scoring import metrics, own_paired
from . import checks

NEW = "new"
KNOWN = "known"
STANDINGS = (NEW, KNOWN)
FAIL_ON = ("any", NEW)
"""What --fail-on takes: fail the job on any failed case, or on new ones only."""


def base_scores(golds: Mapping[str, str], base: Mapping[str, str]) -> metrics.Scores | None:
    """The base's scores on the case's items (scenario -> gold) from its outcomes (scenario -> less, more,
    equal, invalid or error); None when it answered none of them."""
    shared = [s for s in golds if s in base]
    if not shared:
        return None
    return own_paired.outcome_scores([golds[s] for s in shared], [base[s] for s in shared])


def base_breaches(scores: metrics.Scores | None, ceilings: Ceilings) -> list[str] | None:
    """The ceilings the base breaches, held as the case is (its gate); None without base answers."""
    return None if scores is None else checks.breaches(scores, ceilings)


def classify(
    ceilings: Sequence[str],
    rises: Sequence[str],
    own: Sequence[str],
    base: Sequence[str] | None,
    base_own: Sequence[str] | None = None,
    own_worse: Sequence[str] = (),
) -> str | None:
    """``new`` or ``known`` for a failed case (None when it passed): known when it did not rise over the
    baseline, the base breaches every ceiling it breaches (``base``: None without base answers) and,
    when the project's own checks failed it, they fail the base too (``base_own``) and none of them
    measured a value much worse than the base's (``own_worse``)."""
    if not (ceilings or rises or own):
        return None
    if rises or base is None or not set(ceilings) <= set(base):
        return NEW
    return NEW if own and (not base_own or own_worse) else KNOWN


def base_values(scores: metrics.Scores) -> dict[str, float | None]:
    """Every gated value of the base (CASE_METRICS' names), as estimated (the messages show estimates)."""
    return {m.name: m.value(scores) for m in metrics.CASE_METRICS}


def known_reason(case: Mapping[str, Any]) -> str:
    """``known: the base fails it too (DirErr(more) 100.0% on the base, 100.0% now, ceiling 50.0%)``:
    the xfail reason of a known failure, from its case summary (plain JSON)."""
    found = (case.get("baseline") or {}).get("base") or {}
    base = found.get("values") or {}
    scores, ceilings = case.get("scores") or {}, case.get("ceilings") or {}
    parts = []
    for name in case.get("breaches") or []:
        metric = next((m for m in metrics.CASE_METRICS if m.name == name), None)
        if metric is None:
            continue  # a check of the project's own: the base's own failures are listed last
        now = scores.get("dir_err", {}).get(metric.label) if metric.label else scores.get(metric.rate)
        ceiling = ceilings.get("dir_err", {}).get(metric.label) if metric.label else ceilings.get(metric.rate)
        parts.append(
            f"{name} {metrics.percent(base.get(name))} on the base, {metrics.percent(now)} now, "
            f"ceiling {metrics.percent(ceiling)}"
        )
    parts += [f"the project's own check on the base: {own}" for own in found.get("own") or []]
    now_values, base_values_ = case.get("own_values") or {}, found.get("own_values") or {}
    tests = case.get("own_tests") or {}
    for name, value in now_values.items():
        if name in tests:
            parts.append(own_paired.text(tests[name]))
        elif name in base_values_:
            parts.append(f"{name}: {base_values_[name]:.3f} on the base, {value:.3f} now")
    return f"known: the base fails it too ({'; '.join(parts)})"


def counts(cases: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``{"new": n, "known": k}`` over case summaries (those with a standing)."""
    return {s: sum(c.get("standing") == s for c in cases) for s in STANDINGS}
