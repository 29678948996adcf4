"""summary.json, built whole here and nowhere else: a run's (its header facts, every case's summary and what
only the session knows of its end), and the stand-in of a run that ended before writing its own. Readers
load it through summary_format (its version checked); docs/results.md ("summary.json, key by key") is the
schema."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends.batch.outcome import BatchSummary
from ..backends.identity import model_identity
from ..records.items import CACHED_USAGE
from ..records.results import read_records
from ..report.protocols import comparison
from ..summary_format import VERSION, completeness
from ..verdict import chance, power
from ..verdict.completeness import incomplete_reasons
from .comparison import baseline_summary, failures
from .facts import RunFacts
from .invariance import invariance_summary
from .served import served_model

STAND_IN_REASON = "the job ended before the suite wrote summary.json (cancelled, killed or out of memory)"


@dataclass(frozen=True)
class SessionFacts:
    """What only the session knows at its end (plugin/finish.py gathers it on the controller)."""

    stopped: str | None
    """Why the session ended before its end (a signal, a server gone); None when it ran to the end."""
    selected: int | None
    """Items selected after -k, -m and --deselect; None when the session stopped before collection ended."""
    reported: int
    """Items that reported an outcome."""
    tests_failed: list[str] = field(default_factory=list)
    """The items pytest failed (``test_framing[<id>]``, sorted): the verdict fails on any it cannot explain."""
    records_dropped: list[str] = field(default_factory=list)
    """One note per results.jsonl line that could not be merged (cut short by a kill)."""
    narrowed: dict[str, Any] | None = None
    """verdict/narrowing.py's block when pytest left cases out; None when it ran the whole selection."""
    reveal_after: list[dict[str, Any]] = field(default_factory=list)
    batch: BatchSummary | None = None
    """What --batch sent and collected; None without --batch."""
    servers_left: list[str] = field(default_factory=list)
    """One line per server of several that went away while the others took over its prompts."""
    merged: Merged | None = None
    """What only a merge knows (merge/session.py): None for a run that asked its model."""


@dataclass(frozen=True)
class Merged:
    """The shards a merged run answered from, as plain facts."""

    merged_from: list[dict[str, Any]]
    """summary.json's ``merged_from``: each shard's index, count, folder and run id."""
    model_identity: object
    """The weights the shards answered with (one across the shards: merge/provenance.py)."""
    asked: dict[str, dict[str, Any]]
    """Per case id, what the shards sent for it (``sent``, ``judge_sent``, ``usage``, summed over the shards):
    the replay sends nothing, and answers a prompt two protocols share with one record."""
    unasked: list[str]
    """One reason per folder of records the shards kept that the whole run did not ask: incomplete."""
    unmerged: list[str] = field(default_factory=list)
    """Why the shards do not make one whole run (one missing, doubled, foreign or incomplete): then no case
    ran, and these are the run's only reasons."""


def _header(run_id: str, model: str, reasons: list[str]) -> dict[str, Any]:
    """The keys every summary.json starts with, a stand-in's included."""
    return {"version": VERSION, "run_id": run_id, "model": model, **completeness(reasons)}


def stand_in(run_id: str, model: str, reason: str = STAND_IN_REASON) -> dict[str, Any]:
    """The record of a run that ended before writing summary.json: incomplete, with no case."""
    return {
        **_header(run_id, model, [reason]),
        "cases_run": 0,
        "cases_failed": 0,
        "cases_errored": 0,
        "cases": [],
        "generated_cases": [],
    }


def run_summary(
    run: RunFacts,
    facts: SessionFacts,
    cases: list[dict[str, Any]],
    generated_cases: Sequence[dict[str, Any]] = (),
    records: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``cases`` are test_framing's; ``generated_cases`` test_generated's (ids ``generated:<id>``). The counts
    and totals take both, so that they agree with pytest's. ``records`` is results.jsonl when the caller
    has read it already. A pure function of its arguments (and results.jsonl when ``records`` is None)."""
    s = run.settings
    merged = facts.merged
    if merged is not None:
        cases = [as_asked(c, merged.asked) for c in cases]
        generated_cases = [as_asked(c, merged.asked) for c in generated_cases]
    every = [*cases, *generated_cases]
    records = read_records(run.run_dir) if records is None else records
    if merged is not None and merged.unmerged:
        reasons = list(merged.unmerged)
    else:
        reasons = incomplete_reasons(facts.stopped, facts.selected, facts.reported, every)
        reasons += merged.unasked if merged is not None else []
    identity = merged.model_identity if merged is not None else model_identity(run.spec, _weights(run, cases))
    return {
        **_header(run.run_id, s.model, reasons),
        "resolved": run.spec.resolved,
        "canonical": run.spec.canonical,
        "model_identity": identity,
        "revision": next((c["revision"] for c in cases if c["revision"] is not None), None),
        "model_revision": s.backend.model_revision,
        "chat_template": dict(run.chat_template),
        "prompt_set": run.prompt_set,
        "dataset": dict(run.dataset),
        "scenarios": len(run.scenarios),
        "scenario_ids": list(run.scenarios),
        "baseline": _base_identity(run, baseline_summary(run, every)),
        "failures": failures(run, every),  # after "baseline": Holm's failures are new failures too
        "power": power.summary(every, forced=s.require_power),
        "at_chance": chance.at_chance(every),
        "thresholds": str(s.thresholds),
        "threshold_sections": [f'model."{n}"' for n in run.threshold_sections],
        "ceilings_from": dict(run.ceilings_from),
        "selection": {
            "framings": s.framings,
            "positions": s.positions,
            "identities": s.identities,
            "formats": s.formats,
            "protocols": s.protocols,
        },
        "cases_run": len(every),
        "cases_failed": sum(not c["passed"] and c["error"] is None for c in every),
        "cases_errored": sum(c["error"] is not None for c in every),
        "prompts_sent": sum(c["sent"] for c in every),
        "usage": {
            "input_tokens": sum(c["usage"]["input_tokens"] for c in every),
            "output_tokens": sum(c["usage"]["output_tokens"] for c in every),
            **{k: sum(c["usage"].get(k, 0) for c in every) for k in ("requests", *CACHED_USAGE)},
            "cost_usd": sum(c["usage"]["cost_usd"] or 0 for c in every)
            if any(c["usage"]["cost_usd"] is not None for c in every)
            else None,
        },
        "protocols": protocol_costs(cases),
        "protocol_comparison": comparison(cases) if s.protocols != ("plain",) else None,
        "cases": cases,
        "generated": run.generated.as_dict() if generated_cases and run.generated is not None else None,
        "generated_cases": list(generated_cases),
        "invariance": invariance_summary(run, records, gated=s.invariance),
        "served_model": served_model(s, records),
        "cases_selected": facts.selected,
        "cases_reported": facts.reported,
        "tests_failed": list(facts.tests_failed),
        "records_dropped": list(facts.records_dropped),
        "servers_left": list(facts.servers_left),
        "narrowed": facts.narrowed,
        "reveal_after": list(facts.reveal_after),
        "batch": None if facts.batch is None else facts.batch.as_dict(),
        "shard": None if s.shard is None else s.shard.as_dict(),  # a shard's verdict waits for the merge
        **({} if merged is None else {"merged_from": merged.merged_from}),
    }


def as_asked(case: dict[str, Any], asked: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A merged case with what the shards sent for it in place of what the replay counted."""
    theirs = asked.get(str(case["case"]))
    if theirs is None:
        return case
    usage = case.get("usage")
    new_usage = None if usage is None else {**usage, **theirs["usage"]}
    return {**case, "sent": theirs["sent"], "judge_sent": theirs["judge_sent"], "usage": new_usage}


def _weights(run: RunFacts, cases: Sequence[dict[str, Any]]) -> str | None:
    """The weights digest the backend reported for a case (its revision, unless --model-revision set one)."""
    if run.settings.backend.model_revision is not None:
        return None
    return next((str(c["revision"]) for c in cases if c.get("revision")), None)


def _base_identity(run: RunFacts, compared: dict[str, Any] | None) -> dict[str, Any] | None:
    """The baseline's summary with its model's identity (``model_identity``, as the run's own), so that
    history finds the base however the baseline file spelled its path."""
    if compared is None or run.baseline is None:
        return compared
    return {**compared, "model_identity": run.baseline.identity}


def protocol_costs(cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per protocol: cases, items, requests and tokens in and out, in all and per item."""
    out: dict[str, dict[str, Any]] = {}
    for case in cases:
        if case["scores"] is None:
            continue
        name = case.get("protocol", "plain")
        entry = out.setdefault(
            name, {"cases": 0, "items": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0, "notes": {}}
        )
        usage = case["usage"]
        entry["cases"] += 1
        entry["items"] += int(case["scores"]["n"])
        entry["requests"] += int(usage.get("requests", 0))
        entry["input_tokens"] += int(usage["input_tokens"])
        entry["output_tokens"] += int(usage["output_tokens"])
        for kind, count in (case.get("protocol_notes") or {}).items():
            entry["notes"][kind] = entry["notes"].get(kind, 0) + count
    for entry in out.values():
        items = entry["items"] or 1
        for key in ("requests", "input_tokens", "output_tokens"):
            entry[f"{key}_per_item"] = entry[key] / items
    return out
