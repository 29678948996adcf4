"""The session's end on the controller: results.jsonl merged, the session's facts handed to run/summary.py
(which builds summary.json whole: whether the run is complete among them) and the summary written,
reports/latest moved, the baseline replaced only from a complete run in which every case scored, and the
verdict appended to $GITHUB_STEP_SUMMARY. The exit status is the run's one verdict (verdict/of_run.py), as
the report, the job summary and the merge say it: an incomplete run never exits 0, and a shard (--shard)
writes shard.json and exits 0 when it ran everything it meant to, whatever its cases found."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from .. import summary_format, userfile
from ..config.thresholds import BASE_FROM
from ..data.generated_draw import GENERATED_DIR
from ..listing import few
from ..printable import printable
from ..records import items as records
from ..records import results
from ..run.folders import PARTNERS, REVEAL_AFTER
from ..settings import Shard
from ..verdict import completeness
from ..verdict import narrowing as verdict_narrowing
from ..verdict import power as verdict_power
from ..verdict.narrowing import item_name
from ..verdict.of_run import verdict
from . import matrix, narrowing
from .merged import plan_of
from .session_tracker import Tracker
from .state import State


def finish(session: pytest.Session, state: State, tracker: Tracker) -> None:
    run = state.run
    plan = plan_of(session.config)  # `mathcomp merge`: its folder is swapped in and its verdict said by it
    run.close()
    merged = results.merge_parts(run.run_dir, records.record_key)
    dropped = merged.notes
    written = {"": len(merged.records)}  # records of the run folder and each subfolder, as merged
    for sub in (GENERATED_DIR, REVEAL_AFTER, PARTNERS):
        if (run.run_dir / sub).is_dir():
            part = results.merge_parts(run.run_dir / sub, records.record_key)
            dropped += part.notes
            written[sub] = len(part.records)
    state.notes += dropped
    state.notes += [f"MathComp: {line}" for line in state.servers_left]
    from ..run.facts import facts_of
    from ..run.summary import SessionFacts, run_summary

    drawn = bool(state.generated_cases) or run.settings.shard is not None  # test_generated's draw is named
    whole = facts_of(run, draw=drawn)  # what summary.json and shard.json say of the run, gathered once
    facts = SessionFacts(
        stopped=tracker.stopped(session),
        selected=None if tracker.selected is None else len(tracker.selected),
        reported=len(tracker.reported),
        tests_failed=sorted({item_name(nodeid) for nodeid in tracker.failed}),
        records_dropped=list(dropped),
        narrowed=narrowing.block(session.config, run.settings, tracker.selected),
        reveal_after=sorted(state.reveal_after.values(), key=lambda r: str(r["case"])),
        batch=run.batching.summary(),
        servers_left=list(state.servers_left),
        merged=None if plan is None else plan.facts(written),
    )
    state.records = merged.records
    state.summary = run_summary(whole, facts, state.cases, state.generated_cases, state.records)
    reasons: list[str] = state.summary["incomplete_reasons"]
    summary_format.write(run.run_dir, state.summary)
    if plan is None:
        results.point_latest(run.settings.reports_dir, run.run_dir)
    borrowed = _borrowed_ceilings(state)
    state.notes += [borrowed] if borrowed else []
    if state.summary["narrowed"]:
        state.notes.append(narrowed_note(state.summary["narrowed"]))
    baseline_unwritten = False
    if run.settings.update_baseline is not None:
        try:
            state.notes.append(_update_baseline(state, reasons))
        except OSError as exc:  # a file or folder that cannot be replaced: said, and the rest still written
            path, why = run.settings.update_baseline, exc.strerror or exc
            state.notes.append(f"baseline not written: {path} cannot be replaced ({why}); {path} unchanged")
            baseline_unwritten = True
    holm_failures = (state.summary.get("baseline") or {}).get("holm_failures") or []
    if holm_failures:
        state.notes.append("failed under the Holm correction: " + "; ".join(holm_failures))
    blind = power_note(state.summary.get("power"), shard=run.settings.shard is not None)
    state.notes += [blind] if blind else []
    if run.settings.require_power and state.summary.get("power") is None:
        state.notes.append(
            "MathComp power: --require-power had nothing to check: no case was compared with a baseline "
            "(give --baseline or --baseline-model)"
        )
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        session.exitstatus = verdict(state.summary).exit_status  # the one verdict: verdict/of_run.py
    if baseline_unwritten:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # it did not do what it was asked
    if run.settings.shard is not None:
        from ..merge import shard_format

        config = session.config
        collected = shard_format.pytest_session(
            config.args, bool(config.option.pyargs), tracker.selected, narrowing.means(config)
        )
        tests = [f"{test}[{case}]" for test, case in matrix.whole(run.settings)]
        shard_format.write(whole, state.summary, tests, collected)
        state.notes.append(shard_note(run.settings.shard, reasons))
    if plan is None:
        unwritten = write_job_summary(state.summary, session.config.option.htmlpath)
        state.notes += [unwritten] if unwritten else []


def shard_note(shard: Shard, reasons: list[str]) -> str:
    """The end-of-run line of a shard: never a verdict of its own."""
    ran = "ran everything it meant to" if not reasons else "is INCOMPLETE: " + "; ".join(reasons)
    return (
        f"MathComp: shard {shard.index} of {shard.count}: merge the shards to gate; this shard "
        f"{ran}; its shard.json lists what it covered"
    )


def write_job_summary(summary: Mapping[str, Any] | None, report: str | Path | None) -> str | None:
    """Append the run's verdict to the file $GITHUB_STEP_SUMMARY names (nothing when it is unset); a
    note for the terminal when that file cannot be written (the run's own outcome stands)."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path or summary is None:
        return None
    from ..verdict import job_summary

    try:
        job_summary.append(path, summary, report)
    except OSError as exc:
        return f"job summary not written: $GITHUB_STEP_SUMMARY={path}: {exc.strerror or exc}"
    return None


def power_note(block: dict[str, Any] | None, shard: bool = False) -> str | None:
    """``MathComp power: 12 of 28 compared cases could not see a rise under 15 points ...``; None when
    every compared case could (or none was compared). A shard's is about its part only: the merge gates."""
    if not block or not block["underpowered"]:
        return None
    weak = block["underpowered"]  # worst first
    unearned = block.get("not_earned_by") or []
    first = next((w for w in weak if w["case"] in unearned), weak[0])
    shown = verdict_power.labels_text(first["labels"], first["seen"])
    if shard:
        verdict = "on this shard's part of the data; the merge of all the shards decides the run's power"
    elif block["not_earned"]:
        verdict = f"the run fails: a pass it did not earn (power required of {len(unearned)} of them: {few(unearned)})"
    else:
        verdict = "--require-power would fail it"
    return (
        f"MathComp power: {len(weak)} of {block['compared']} compared cases "
        f"{verdict_power.unseen(block)} at 80% power, e.g. {first['case']}: {shown}; "
        f"summary.json power has each; {verdict}"
    )


def _borrowed_ceilings(state: State) -> str | None:
    """One line when the ceilings this model is held to are another model's (its baseline's): a team should
    know the gate is that model's, not one written for this one."""
    run = state.run
    if not run.thresholds.borrowed(run.spec) or run.thresholds.base is None:
        return None
    shown = ", ".join(f'[model."{n}"]' for n in run.thresholds.sections(run.spec))
    where = BASE_FROM.get(run.thresholds.base_from, run.thresholds.base_from)
    return (
        f"MathComp: ceilings: {printable(run.spec.given)} has no [model.*] section in {run.thresholds.path}, so it "
        f"was held to {shown}, the sections of {printable(run.thresholds.base.given)} (the model of {where}); "
        "add a section for it to set its own"
    )


def narrowed_note(block: dict[str, Any]) -> str:
    """The end-of-run line of a narrowed run: what it left out, so that its PASS is not read as the suite's."""
    shown = verdict_narrowing.left_out_text(block, 3)
    text = f"MathComp: narrowed by {verdict_narrowing.by_text(block)}: {verdict_narrowing.phrase(block, by=False)}"
    return text + (f"; not run: {shown}" if shown else "")


def _update_baseline(state: State, reasons: list[str]) -> str:
    """Write --update-baseline from this run, or leave the file as it was: the line that says which. A
    narrowed run rewrites only its own cases inside an existing file (baseline_file/update.py)."""
    from ..baseline_file import reader, update, writer
    from ..baseline_file.format import BaselineError

    path = state.run.settings.update_baseline
    assert path is not None
    every = [*state.cases, *state.generated_cases]
    refused = completeness.baseline_refusal(reasons, every)
    if refused is not None:
        return f"baseline not written: {refused}; {path} unchanged"
    fresh = writer.ordered(reader.from_run_dir(state.run.run_dir), [c["case"] for c in every])
    narrowed = (state.summary or {}).get("narrowed")
    counts = f"{len(state.cases)} cases, {len(state.generated_cases)} generated cases"
    if narrowed and userfile.target(path).exists():
        by = verdict_narrowing.by_text(narrowed)
        try:
            done = update.update(path, fresh)
        except BaselineError as exc:
            return (
                f"baseline not written: the run was narrowed by {by}, so it may only rewrite its own cases inside "
                f"{path}, but {exc}; {path} unchanged (run the whole selection to rewrite it)"
            )
        added = f", {done.added} added" if done.added else ""
        return (
            f"baseline updated: {path}: {done.rewritten} of its {done.total} cases rewritten from this run{added}, "
            f"the other {done.kept} kept as they were (the run was narrowed by {by})"
        )
    dropped = _dropped(path, fresh)
    written = writer.write(fresh, path)
    line = f"baseline written: {written} ({counts})"
    if narrowed:
        line += (
            f"; the run was narrowed by {verdict_narrowing.by_text(narrowed)}: the file holds only these "
            f"{narrowed['cases_selected']} of the {narrowed['cases_in_suite']} cases"
        )
    if dropped:
        line += f"; {len(dropped)} cases of the old file are no longer selected and were dropped: {few(dropped)}"
    return line


def _dropped(path: Path, fresh: Any) -> list[str]:
    """The cases of the baseline file at ``path`` that a whole run's file will not hold (none when there is no
    readable file)."""
    from ..baseline_file import reader
    from ..baseline_file.format import BaselineError

    if not userfile.target(path).is_file():
        return []
    try:
        old = reader.load(path)
    except BaselineError:
        return []
    return [c for c in old.cases if c not in fresh.cases]
