"""A cue case against its neutral partner: answer tables from a case's items or from results.jsonl
records, every invariance metric (and, for the chain-of-thought formats, cue echo and drift) on all
pairs and on the Truth / Flip halves, and the breaches of the [invariance] ceilings (resolved from
thresholds.toml by config/invariance_ceilings.py, handed in by the caller)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..reading.context import Persons
from ..types import NEUTRAL, Condition, Item, Label, cue_label
from . import invariance, rationale
from .intervals import BOOTSTRAP_REPS

HALVES = ("all", "truth", "flip")
Ceilings = Mapping[str, Mapping[str, float]]
"""metric -> half (all, truth, flip) -> ceiling, as config/invariance_ceilings.py resolves them; the
neutral metrics use the half ``all``."""
NAMES = {
    "flip_rate": "flip rate",
    "toward_cue_rate": "toward-cue rate",
    "lds": "LDS",
    "lao": "LAO",
    "cue_echo": "cue echo",
    "drift": "explanation drift",
    "nd": "ND",
    "edr_min": "EDR",
}


def breaches(metrics: Mapping[str, Any], ceilings: Ceilings) -> list[str]:
    """One line per metric over its ceiling (or EDR under its floor), with the value and its interval.

    ``metrics`` holds the halves (``all``, ``truth``, ``flip``) of a cue case, or the neutral metrics.
    """
    found = []
    for key, by_half in ceilings.items():
        for half, limit in by_half.items():
            part = metrics.get(half) if "all" in metrics else (metrics if half == "all" else None)
            entry = part.get("edr" if key == "edr_min" else key) if isinstance(part, Mapping) else None
            if not isinstance(entry, Mapping) or entry.get("value") is None:
                continue
            value = entry["value"]
            bad = value < limit if key == "edr_min" else value > limit
            if bad:
                interval = entry.get("interval")
                shown = f" (95% CI {interval[0]:.3f}-{interval[1]:.3f})" if interval else ""
                word = "under its floor" if key == "edr_min" else "above its ceiling"
                where = "" if half == "all" else f" on the {half.capitalize()} half"
                found.append(f"{NAMES[key]}{where} {value:.3f}{shown} {word} {limit:.3f}")
    return found




@dataclass(frozen=True)
class Answers:
    """One case's answers by key (scenario id, ``<id>#<k>`` for samples after the first)."""

    labels: dict[str, str]
    gold: dict[str, str]
    raw: dict[str, str] = field(default_factory=dict)
    persons: dict[str, Persons] = field(default_factory=dict)
    """scenario id -> how the prompt named the persons (read by cue echo)."""


def key(scenario: str, sample: int | None) -> str:
    return scenario if not sample else f"{scenario}{invariance.SAMPLE_SEP}{sample}"


def from_items(items: Iterable[Item]) -> Answers:
    out = Answers({}, {})
    for i in items:
        k = key(i.prompt.scenario.id, i.sample)
        out.labels[k] = i.prediction.label or i.prediction.status
        out.gold[k] = i.prompt.scenario.label
        out.raw[k] = i.response.text
        out.persons[i.prompt.scenario.id] = Persons.named(i.prompt.person_a, i.prompt.person_b)
    return out


def from_records(
    records: Iterable[Mapping[str, Any]], persons: Mapping[str, Persons] | None = None
) -> Answers:
    out = Answers({}, {}, persons=dict(persons or {}))
    for r in records:
        k = key(str(r["scenario"]), r.get("sample"))
        out.labels[k] = r["label"] or r["status"]
        out.gold[k] = r["gold"]
        out.raw[k] = r.get("raw") or ""
    return out


def condition_of(record: Mapping[str, Any]) -> Condition:
    """The Condition a record's fields name (every Condition field the record carries)."""
    names = {f.name for f in fields(Condition)}
    return Condition(**{k: v for k, v in record.items() if k in names})


def neutral_partner(condition: Condition) -> Condition:
    return replace(condition, framing=NEUTRAL)


def _subset(table: Mapping[str, str], gold: Mapping[str, str], cue: Label, half: str) -> dict[str, str]:
    if half == "all":
        return dict(table)
    return {k: v for k, v in table.items() if k in gold and (gold[k] == cue) == (half == "truth")}


def compare(
    neutral: Answers,
    cued: Answers,
    condition: Condition,
    ceilings: Ceilings | None = None,
    drift: bool = True,
    reps: int = BOOTSTRAP_REPS,
) -> dict[str, Any]:
    """Plain JSON: the metrics by half, ceilings, breaches and notes for one cue case."""
    cue = cue_label(condition.framing)
    if cue is None:
        raise ValueError(f"{condition.id}: the neutral framing has no cue to compare against itself")
    metrics = invariance.cue_metrics(neutral.labels, cued.labels, cued.gold, cue, reps)
    notes: list[str] = []
    if condition.format in rationale.RATIONALE_FORMATS:
        for half in HALVES:
            raw = _subset(cued.raw, cued.gold, cue, half)
            echo = rationale.cue_echo(raw, cued.labels, cue, condition.format, cued.persons, reps)
            metrics[half].update(cue_echo=echo["cue_echo"], phrased_with_cue=echo["phrased_with_cue"])
            metrics[half]["echo_n"] = echo["n"]
        reference = rationale.cue_echo(
            neutral.raw, neutral.labels, cue, condition.format, neutral.persons, reps
        )
        metrics["all"]["phrased_with_cue_neutral"] = reference["phrased_with_cue"]
        if drift:
            try:
                for half in HALVES:
                    d = rationale.drift(
                        neutral.raw, _subset(cued.raw, cued.gold, cue, half), neutral.labels, cued.labels,
                        condition.format, reps=reps,
                    )  # fmt: skip
                    metrics[half].update(drift=d["drift"], drift_n=d["n"])
            except rationale.EmbeddingUnavailable as exc:
                notes.append(str(exc))
    found = breaches(metrics, ceilings or {})
    return {
        "case": condition.id,
        "neutral_case": neutral_partner(condition).id,
        **{f.name: getattr(condition, f.name) for f in fields(Condition)},
        "cue": cue,
        **metrics,
        "ceilings": ceilings or {},
        "breaches": found,
        "passed": not found,
        "notes": notes,
    }


def neutral_summary(
    neutral: Answers,
    condition: Condition,
    ceilings: Ceilings | None = None,
    reps: int = BOOTSTRAP_REPS,
) -> dict[str, Any]:
    """EDR and ND of one neutral case, with its ceilings (nd, edr_min) and breaches."""
    metrics = invariance.neutral_metrics(neutral.labels, neutral.gold, reps)
    found = breaches(metrics, ceilings or {})
    return {
        "case": condition.id,
        **{f.name: getattr(condition, f.name) for f in fields(Condition)},
        **metrics,
        "ceilings": ceilings or {},
        "breaches": found,
        "passed": not found,
    }


def explanation(summary: Mapping[str, Any]) -> str:
    """The failure message of an invariance case: what breached, then the numbers behind it."""
    lines = [f"{summary['case']} against {summary.get('neutral_case', 'itself')}:"]
    lines += [f"  {b}" for b in summary["breaches"]]
    if "all" in summary:
        for half in HALVES:
            part = summary[half]
            shown = ", ".join(
                f"{NAMES[k]} {part[k]['value']:.3f}"
                for k in (*invariance.PAIRED, "cue_echo", "drift")
                if isinstance(part.get(k), Mapping) and part[k]["value"] is not None
            )
            left = part["excluded"]
            lines.append(
                f"  {half} ({part['n']} pairs; left out: {left['invalid']} invalid, {left['error']} error): "
                f"{shown or 'no values'}"
            )
    else:
        lines.append(
            f"  {summary['n']} usable answers; EDR {summary['edr']['value']}, ND {summary['nd']['value']}"
        )
    return "\n".join(lines)
