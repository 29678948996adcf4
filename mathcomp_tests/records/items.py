"""Plain-JSON records of a case: one line per item for results.jsonl, one summary per case."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from ..types import LABELS, Condition, Item, Turn
from ..verdict import standing
from ..verdict.explain import PROMPT_TAIL
from ..verdict.result import CaseResult
from .unreadable import unreadable

RAW_CHARS = 2000
"""Characters of a model's answer kept in a case summary's examples (results.jsonl keeps it whole)."""


def condition_fields(c: Condition) -> dict[str, Any]:
    """The case id and every dimension of its condition, as each record names them."""
    return {
        "case": c.id,
        "framing": c.framing,
        "position": c.position,
        "identity": c.identity,
        "identity_on": c.identity_on,
        "format": c.format,
        "options": c.options,
        "protocol": c.protocol,
    }


def item_record(
    item: Item, run_id: str, model: str, revision: str, chat_template: str | None = None
) -> dict[str, Any]:
    """One line of results.jsonl: enough to recompute any paired metric later, and how it was asked."""
    s, c = item.prompt.scenario, item.prompt.condition
    return {
        "run_id": run_id,
        **condition_fields(c),
        "prompt_set": item.prompt.prompt_set,
        "scenario": s.id,
        "category": s.category,
        "quantity": s.quantity,
        "gold": s.label,
        "model": model,
        "revision": revision,
        "chat_template": chat_template,
        "prompt": item.prompt.text,
        "raw": item.response.text,
        "label": item.prediction.label,
        "status": item.prediction.status,
        "decided_by": item.prediction.decided_by,
        "judge_raw": item.judge_reply.text if item.judge_reply is not None else None,
        "error": item.response.error,
        "cached": item.response.cached,
        "sample": item.sample,
        "input_tokens": _tokens(item, "input_tokens"),
        "output_tokens": _tokens(item, "output_tokens"),
        "probs": None if item.turns else item.response.meta.get("probs"),
        "cost": item.response.meta.get("cost") if not item.turns else _turn_cost(item),
        **({"served_model": item.response.meta["served_model"]} if "served_model" in item.response.meta else {}),
        **({"redacted": True} if any(r.meta.get("redacted") for r in item.requests) else {}),
        **({"turns": [_turn(t) for t in item.turns], "note": item.note} if item.turns else {}),
    }


def _tokens(item: Item, which: str) -> int | None:
    """Tokens of an item summed over every request it took (None when no backend reported any)."""
    counts = [getattr(r, which) for r in item.requests]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _turn_cost(item: Item) -> float | None:
    costs = [r.meta.get("cost") for r in item.requests]
    known = [float(c) for c in costs if isinstance(c, (int, float))]
    return sum(known) if known else None


def _turn(turn: Turn) -> dict[str, Any]:
    """One request of a protocol: what it asked (every message) and what came back."""
    r = turn.response
    return {
        "turn": turn.name,
        "messages": [{"role": m.role, "content": m.content} for m in turn.prompt.messages],
        "raw": r.text,
        "error": r.error,
        "cached": r.cached,
        "input_tokens": r.input_tokens,
        "output_tokens": r.output_tokens,
    }


CACHED_USAGE = ("cached_requests", "cached_input_tokens", "cached_output_tokens")
"""A case's (and the run's) usage keys that count the answers taken from the cache."""


def usage(result: CaseResult) -> dict[str, float | int | None]:
    """Tokens in and out over a case's items, and cost where the provider's price is known; the
    ``cached_`` counts are the part of them whose answers came from the cache (not sent in this run)."""
    responses = [r for i in result.items for r in i.requests]
    cached = [r for r in responses if r.cached]
    costs = [r.meta.get("cost") for r in responses]
    known = [float(c) for c in costs if isinstance(c, (int, float))]
    return {
        "input_tokens": sum(r.input_tokens or 0 for r in responses),
        "output_tokens": sum(r.output_tokens or 0 for r in responses),
        "cost_usd": sum(known) if known else None,
        "requests": len(responses),
        "cached_requests": len(cached),
        "cached_input_tokens": sum(r.input_tokens or 0 for r in cached),
        "cached_output_tokens": sum(r.output_tokens or 0 for r in cached),
    }


def protocol_notes(result: CaseResult) -> dict[str, int]:
    """How often the protocol noted something (`disagree`, `rewrite rejected`), by kind."""
    counts: dict[str, int] = {}
    for item in result.items:
        if item.note:
            kind = item.note.split(":", 1)[0]
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def decided(result: CaseResult) -> dict[str, int]:
    """How a case's items got their labels: by a reading rule, by the judge, or not at all."""
    counts = {"rule": 0, "judge": 0, "invalid": 0, "error": 0}
    for item in result.items:
        p = item.prediction
        if p.status != "ok":
            counts[p.status] += 1
        else:
            counts["judge" if p.decided_by == "judge" else "rule"] += 1
    return counts


def sample_spread(result: CaseResult) -> dict[str, Any] | None:
    """Mean and spread (sample standard deviation, min, max) of DirErr across a case's samples."""
    if len(result.sample_scores) < 2:
        return None
    out: dict[str, Any] = {"k": len(result.sample_scores)}
    for y in LABELS:
        values = [v for v in (s.dir_err[y] for s in result.sample_scores) if v is not None]
        out[y] = (
            {
                "mean": statistics.fmean(values),
                "sd": statistics.stdev(values),
                "min": min(values),
                "max": max(values),
            }
            if values
            else None
        )
    return out


def case_summary(result: CaseResult) -> dict[str, Any]:
    """Plain JSON for the test report (travels from xdist workers) and summary.json."""
    return {
        **condition_fields(result.condition),
        "model": result.model,
        "revision": result.revision,
        "chat_template": result.chat_template,
        "passed": result.passed,
        "error": None,
        "breaches": result.breaches,
        "own_values": result.own_values,
        "own_tests": result.own_tests,
        "scores": result.scores.as_dict(),
        "ceilings": result.ceilings.as_dict(),
        "sent": result.sent,
        "judge_sent": result.judge_sent,
        "usage": usage(result),
        "protocol_notes": protocol_notes(result),
        "decided": decided(result),
        "samples": sample_spread(result),
        "baseline": _baseline(result),
        "standing": result.standing,
        "unreadable": unreadable(result),
        "examples": [
            {
                "scenario": i.prompt.scenario.id,
                "gold": i.prompt.scenario.label,
                "read": i.prediction.label or i.prediction.status,
                "decided_by": i.prediction.decided_by,
                "raw": i.response.text[:RAW_CHARS],
                "prompt_tail": i.prompt.text[-PROMPT_TAIL:],
            }
            for i in result.wrong_items(3)
        ],
    }


def _baseline(result: CaseResult) -> dict[str, Any] | None:
    """The comparison with the baseline; `no baseline` when the baseline lacks the case; None without one."""
    if result.comparison is not None:
        return {**result.comparison.as_dict(), "base": _base(result)}
    if result.baseline_status == "no baseline":
        return {"status": "no baseline"}
    return None


def _base(result: CaseResult) -> dict[str, Any] | None:
    """The base's own values on the case's items and the ceilings it breaches (what makes a failure
    known); None when the baseline answered none of them."""
    if result.base_scores is None:
        return None
    return {
        "values": standing.base_values(result.base_scores),
        "breaches": result.base_breaches,
        "own": list(result.base_extra_failures or []),
        "own_values": result.base_own_values,
    }


def errored_case(condition: Condition, error: str) -> dict[str, Any]:
    """The summary of a case that raised instead of scoring: no scores, its error, counted as run."""
    return {
        **condition_fields(condition),
        "model": None,
        "revision": None,
        "passed": False,
        "error": error,
        "breaches": [],
        "scores": None,
        "ceilings": None,
        "sent": 0,
        "judge_sent": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": None, "requests": 0}
        | dict.fromkeys(CACHED_USAGE, 0),
        "examples": [],
    }


def record_key(record: Mapping[str, Any]) -> tuple[object, ...]:
    """What makes a results.jsonl line unique in a run: one answer per case, scenario and sample."""
    return (record.get("case"), record.get("scenario"), record.get("sample"))
