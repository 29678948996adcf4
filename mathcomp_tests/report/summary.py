"""summary.json: the run's header facts and every case's summary, assembled on the controller."""

from __future__ import annotations

from typing import Any

from ..run import Run
from ..scoring.baseline import sha256_of
from .comparison import baseline_summary
from .invariance import invariance_summary
from .results import read_records


def run_summary(run: Run, cases: list[dict[str, Any]]) -> dict[str, Any]:
    s = run.settings
    return {
        "run_id": run.run_id,
        "model": s.model,
        "resolved": run.spec.resolved,
        "revision": next((c["revision"] for c in cases if c["revision"] is not None), None),
        "model_revision": s.backend.model_revision,
        "prompt_set": run.prompt_set.name,
        "dataset": {
            "name": run.dataset.name,
            "path": str(run.dataset.path),
            "policy": run.dataset.policy,
            "excluded": [str(f) for f in run.dataset.excluded],
            "kept_invalid": [str(f) for f in run.dataset.kept_invalid],
            "audit_notes": len(run.dataset.notes),
            "sha256": sha256_of(run.dataset.path),
        },
        "scenarios": len(run.scenarios),
        "scenario_ids": [sc.id for sc in run.scenarios],
        "baseline": baseline_summary(run, cases),
        "thresholds": str(s.thresholds),
        "threshold_sections": [f'model."{n}"' for n in run.thresholds.model_sections(run.spec)],
        "selection": {
            "framings": s.framings,
            "positions": s.positions,
            "identities": s.identities,
            "formats": s.formats,
        },
        "cases_run": len(cases),
        "cases_failed": sum(not c["passed"] and c["error"] is None for c in cases),
        "cases_errored": sum(c["error"] is not None for c in cases),
        "prompts_sent": sum(c["sent"] for c in cases),
        "usage": {
            "input_tokens": sum(c["usage"]["input_tokens"] for c in cases),
            "output_tokens": sum(c["usage"]["output_tokens"] for c in cases),
            "cost_usd": sum(c["usage"]["cost_usd"] or 0 for c in cases)
            if any(c["usage"]["cost_usd"] is not None for c in cases)
            else None,
        },
        "cases": cases,
        "invariance": invariance_summary(run, read_records(run.run_dir), gated=s.invariance),
    }
