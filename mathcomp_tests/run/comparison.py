"""The run-level view of the baseline comparison: what was compared, which cases had no baseline, and the
Holm correction across every case and label (applied once all cases are in)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.changes import largest_change as largest_change  # the one meaning (the table, the report)
from ..scoring.changes import tests
from ..scoring.intervals import holm
from ..scoring.paired import ALPHA
from ..verdict import standing
from .facts import RunFacts


def holm_failures(cases: Sequence[dict[str, Any]]) -> list[str]:
    """Cases whose rise over the baseline Holm finds significant but that passed at the per-test level
    alpha/m used while the run went (Holm rejects at least what that level rejects, sometimes more)."""
    found = [
        (c["case"], name, change)
        for c in cases
        for name, change in tests(c.get("baseline"))
        if change["difference"] is not None
    ]
    rejected = holm([t[2]["p_value"] for t in found], ALPHA)
    out = []
    for (case_id, name, change), reject in zip(found, rejected, strict=True):
        change["holm_significant"] = reject  # type: ignore[index]  # the summary's own dict, marked here
        if reject and change["difference"] > change["max_increase"] and not change["breach"]:
            out.append(f"{case_id}: {name} rise")
    return out


def baseline_summary(run: RunFacts, cases: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    s = run.settings
    comparator = run.baseline
    if comparator is None:
        return None
    compared = [c for c in cases if (c.get("baseline") or {}).get("status") == "compared"]
    holm = holm_failures(cases) if s.holm else []
    failed_by_holm = {text.partition(": ")[0] for text in holm}
    for case in cases:  # a rise only Holm finds fails the run: a rise is always new
        if case["case"] in failed_by_holm:
            case["standing"] = standing.NEW
    return {
        "source": str(s.baseline) if s.baseline is not None else None,
        "model": comparator.model,
        "paired_test": s.paired_test,
        "holm": s.holm,
        "alpha": ALPHA,
        "level": comparator.level,
        "tests": sum(len(tests(c["baseline"])) for c in compared),
        "compared": len(compared),
        "no_baseline": [c["case"] for c in cases if (c.get("baseline") or {}).get("status") == "no baseline"],
        "rises": [
            f"{c['case']}: {name}" for c in compared for name, change in tests(c["baseline"]) if change["breach"]
        ],
        "holm_failures": holm,
        "largest_change": largest_change(cases),
        "fail_on": s.fail_on,
    }


def failures(run: RunFacts, cases: Sequence[dict[str, Any]]) -> dict[str, int] | None:
    """summary.json's ``failures``: how many failed cases are new and how many known (the base fails them
    too); None without a baseline. Read after baseline_summary, which marks the rises only Holm finds."""
    return standing.counts(cases) if run.baseline is not None else None
