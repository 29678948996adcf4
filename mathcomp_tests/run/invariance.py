"""The cue-invariance summary: computed from results.jsonl at the end of a run, written into summary.json
(``invariance``) and drawn by report/invariance.py."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..reading.context import Persons
from ..scoring import cue_pairs, rationale
from ..types import NEUTRAL, Condition
from .facts import RunFacts, names_key


def invariance_summary(run: RunFacts, records: Sequence[Mapping[str, Any]], gated: bool = False) -> dict[str, Any]:
    """Every neutral case's EDR / ND and every cue case against its neutral partner, from the records.

    ``gated``: the run held these to their ceilings (--invariance). Drift loads the sentence-embedding
    model, so it is computed only then."""
    drift = gated
    by_case: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:  # a case's records name one condition: read it once per case
        by_case[str(record["case"])].append(record)
    groups: dict[Condition, list[Mapping[str, Any]]] = defaultdict(list)
    for rows in by_case.values():
        groups[cue_pairs.condition_of(rows[0])] += rows
    if drift:
        _embed_rationales(groups)
    neutral, cues, notes = [], [], set()
    for condition, rows in groups.items():
        if condition.framing != NEUTRAL:
            continue
        ceilings = run.invariance_ceilings[NEUTRAL]
        neutral.append(cue_pairs.neutral_summary(cue_pairs.from_records(rows), condition, ceilings))
    for condition, rows in groups.items():
        partner = cue_pairs.neutral_partner(condition)
        if condition.framing == NEUTRAL or partner not in groups:
            continue
        persons = _persons(run, condition) if condition.format in rationale.RATIONALE_FORMATS else {}
        ceilings = run.invariance_ceilings[condition.framing]
        compared = cue_pairs.compare(
            cue_pairs.from_records(groups[partner], _persons(run, partner) if persons else {}),
            cue_pairs.from_records(rows, persons),
            condition,
            ceilings,
            drift=drift,
        )
        notes.update(compared["notes"])
        cues.append(compared)
    return {"neutral": neutral, "cues": cues, "notes": sorted(notes), "drift_computed": drift, "gated": gated}


def _persons(run: RunFacts, condition: Condition) -> dict[str, Persons]:
    """How ``condition``'s prompts name the persons, by scenario (the question's names: every scenario's)."""
    persons = Persons.named(*run.question_names[names_key(condition)])
    return dict.fromkeys(run.scenarios, persons)


def _embed_rationales(groups: Mapping[Condition, Sequence[Mapping[str, Any]]]) -> None:
    """Every chain-of-thought rationale of the run embedded in one call of the encoder, before the cue cases
    compare theirs (a controller under xdist, which ran none of test_cue_invariance, starts from nothing)."""
    texts = [
        rationale.rationale(str(r.get("raw") or ""), condition.format)
        for condition, rows in groups.items()
        if condition.format in rationale.RATIONALE_FORMATS
        for r in rows
    ]
    if texts:
        with contextlib.suppress(rationale.EmbeddingUnavailable):  # compare() notes it, case by case
            rationale.encoder().warm(texts)
