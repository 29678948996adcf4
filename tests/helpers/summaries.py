"""Hand-made summary.json pieces, shaped as run/summary.py and records/items.py write them, for report tests
that need no model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LABELS = ("less", "more", "equal")
OUTCOMES = (*LABELS, "invalid", "error")


def change(
    difference: float | None,
    p_value: float = 0.5,
    *,
    baseline: float = 0.1,
    max_increase: float = 0.05,
    low: float | None = None,
    high: float | None = None,
    alpha: float = 0.05,
    rose: Sequence[str] = (),
    fell: int = 0,
) -> dict[str, Any]:
    """One label's paired change, as scoring/paired.py's LabelChange.as_dict writes it; ``rose``: the
    scenarios newly answered with the label."""
    significant = difference is not None and p_value < alpha
    return {
        "label": "",
        "baseline": baseline,
        "candidate": None if difference is None else baseline + difference,
        "difference": difference,
        "low": low if low is not None else (None if difference is None else difference - 0.1),
        "high": high if high is not None else (None if difference is None else difference + 0.1),
        "p_value": p_value,
        "pairs": 200,
        "rose": len(rose),
        "fell": fell,
        "max_increase": max_increase,
        "significant": significant,
        "breach": bool(significant and difference is not None and difference > max_increase),
        "rose_scenarios": list(rose),
    }


def case(
    framing: str,
    position: str = "begin",
    *,
    dir_err: dict[str, float | None] | None = None,
    ceiling: float = 0.2,
    changes: dict[str, dict[str, Any]] | None = None,
    own: tuple[str, ...] = (),
    fmt: str = "one-word",
    identity: str = "std",
    n: int = 300,
) -> dict[str, Any]:
    """A scored case summary; its breaches follow from the values, ceilings and changes given."""
    values = {y: 0.05 for y in LABELS} | (dir_err or {})
    breaches = [f"DirErr({y})" for y in LABELS if (values[y] or 0) > ceiling]
    if changes:
        breaches += [f"DirErr({y}) rise" for y, c in changes.items() if c["breach"]]
    breaches += list(own)
    confusion = {g: dict.fromkeys(OUTCOMES, 0) for g in LABELS}
    for g in LABELS:
        confusion[g][g] = n // 3
    full = {y: changes.get(y, change(0.0, 1.0)) for y in LABELS} if changes else None
    return {
        "case": f"{framing}-{position}-{identity}-{fmt}",
        "framing": framing,
        "position": position,
        "identity": identity,
        "identity_on": "b",
        "format": fmt,
        "options": "natural",
        "protocol": "plain",
        "model": "m",
        "revision": "r",
        "passed": not breaches,
        "error": None,
        "breaches": breaches,
        "scores": {
            "n": n,
            "confusion": confusion,
            "dir_err": values,
            "accuracy": 0.5,
            "invalid_rate": 0.0,
            "error_rate": 0.0,
            "dir_err_ci": None,
        },
        "ceilings": {
            "dir_err": dict.fromkeys(LABELS, ceiling),
            "invalid_rate": 0.1,
            "error_rate": 0.02,
            "gate": "point",
            "max_increase": dict.fromkeys(LABELS, 0.05),
        },
        "sent": n,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": None, "requests": n},
        "baseline": {
            "status": "compared",
            "baseline_model": "base",
            "method": "mcnemar",
            "alpha": 0.05,
            "changes": full,
            "changed_items": [],
        }
        if full
        else None,
        "examples": [],
    }


def summary(
    cases: list[dict[str, Any]],
    *,
    model: str = "hf:finetune",
    run_id: str = "20261124-120000-finetune-ab12",
    base: str | None = "hf:fixtures/models/mathcomp-tiny",
    scenarios: int = 300,
    framings: tuple[str, ...] = ("neutral", "direct-less"),
    holm_failures: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A summary.json around ``cases``; ``base`` None: the run had no baseline."""
    failed = sum(not c["passed"] and c["error"] is None for c in cases)
    compared = [c for c in cases if (c.get("baseline") or {}).get("status") == "compared"]
    return {
        "run_id": run_id,
        "model": model,
        "resolved": model,
        "revision": "abc",
        "prompt_set": "hf",
        "dataset": {
            "name": "fixtures/scenarios.csv",
            "path": "fixtures/scenarios.csv",
            "policy": "strict",
            "excluded": [],
            "kept_invalid": [],
            "audit_notes": 0,
            "sha256": "f" * 64,
        },
        "scenarios": scenarios,
        "scenario_ids": [str(i) for i in range(1, scenarios + 1)],
        "baseline": None
        if base is None
        else {
            "source": None,
            "model": base,
            "paired_test": "mcnemar",
            "holm": bool(holm_failures),
            "alpha": 0.05,
            "compared": len(compared),
            "no_baseline": [],
            "rises": [f"{c['case']}: {b[:-5]}" for c in cases for b in c["breaches"] if b.endswith(" rise")],
            "holm_failures": list(holm_failures),
        },
        "thresholds": "thresholds.toml",
        "threshold_sections": [],
        "selection": {
            "framings": list(framings),
            "positions": ["begin", "end"],
            "identities": ["std"],
            "formats": ["one-word"],
            "protocols": ["plain"],
        },
        "cases_run": len(cases),
        "cases_failed": failed,
        "cases_errored": sum(c["error"] is not None for c in cases),
        "prompts_sent": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": None},
        "protocols": {},
        "protocol_comparison": None,
        "cases": cases,
        "invariance": {"neutral": [], "cues": [], "notes": [], "drift_computed": False, "gated": False},
        "reveal_after": [],
    }
