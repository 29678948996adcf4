"""The session's end on the controller: results.jsonl merged, summary.json written with whether the run is
complete, reports/latest moved, and the baseline replaced only from a complete run in which every case
scored. An incomplete run never exits 0."""

from __future__ import annotations

import pytest

from ..records import items as records
from ..records import results
from ..run import GENERATED, REVEAL_AFTER
from ..verdict import completeness
from . import batch_phase, standing
from .completeness import Tracker
from .state import State


def finish(session: pytest.Session, state: State, tracker: Tracker) -> None:
    run = state.run
    run.close()
    merged = results.merge_parts(run.run_dir, records.record_key)
    dropped = merged.notes
    for sub in (GENERATED, REVEAL_AFTER):
        if (run.run_dir / sub).is_dir():
            dropped += results.merge_parts(run.run_dir / sub, records.record_key).notes
    state.notes += dropped
    from ..run.summary import run_summary

    every = [*state.cases, *state.generated_cases]
    selected = None if tracker.selected is None else len(tracker.selected)
    reasons = completeness.incomplete_reasons(
        tracker.stopped(session), selected, len(tracker.reported), every
    )
    state.records = merged.records
    state.summary = run_summary(run, state.cases, state.generated_cases, state.records)
    state.summary["status"] = completeness.status(reasons)
    state.summary["incomplete_reasons"] = reasons
    state.summary["cases_selected"] = selected
    state.summary["cases_reported"] = len(tracker.reported)
    state.summary["records_dropped"] = dropped
    state.summary["reveal_after"] = sorted(state.reveal_after.values(), key=lambda r: str(r["case"]))
    batched = batch_phase.summary(session.config.pluginmanager.get_plugin("mathcomp-batch"))
    if batched is not None:
        state.summary["batch"] = batched
    results.write_summary(run.run_dir, state.summary)
    results.point_latest(run.settings.reports_dir, run.run_dir)
    if run.settings.update_baseline is not None:
        state.notes.append(_update_baseline(state, reasons))
    holm_failures = (state.summary.get("baseline") or {}).get("holm_failures") or []
    if holm_failures:
        state.notes.append("failed under the Holm correction: " + "; ".join(holm_failures))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if reasons and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # only a complete run can pass
    unwritten = standing.write_job_summary(state.summary, session.config.option.htmlpath)
    state.notes += [unwritten] if unwritten else []


def _update_baseline(state: State, reasons: list[str]) -> str:
    """Write --update-baseline from this run, or leave the file as it was: the line that says which."""
    from ..scoring import baseline

    path = state.run.settings.update_baseline
    assert path is not None
    every = [*state.cases, *state.generated_cases]
    refused = completeness.baseline_refusal(reasons, every)
    if refused is not None:
        return f"baseline not written: {refused}; {path} unchanged"
    order = [c["case"] for c in every]
    written = baseline.write(baseline.from_run_dir(state.run.run_dir), path, order)
    return f"baseline written: {written} ({len(state.cases)} cases, {len(state.generated_cases)} generated cases)"
