"""AT CHANCE: a neutral case answered no better than one constant answer would be.

DirErr ceilings set around a model's own numbers pass such a model while it knows none of the arithmetic
(the demonstration model is one), so a pass there says nothing. One pure function finds them, from the case
summaries as summary.json holds them; the terminal's notes, summary.json's ``at_chance``, the report and the
job summary all read what it finds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..scoring.metrics import percent
from ..types import NEUTRAL

Case = Mapping[str, Any]


def _readable(scores: Mapping[str, Any]) -> int:
    """Answers read as a label: a case with none is not "at chance", it scored nothing."""
    return sum(
        n for row in scores["confusion"].values() for k, n in row.items() if k not in ("invalid", "error")
    )


def at_chance(cases: Iterable[Case]) -> list[dict[str, Any]]:
    """summary.json's ``at_chance``: ``{"case", "accuracy", "constant", "label"}`` for each neutral case whose
    accuracy is no better than always answering its commonest gold ``label`` (right on ``constant`` of its
    items), in the order of ``cases``. A case that raised or read no label is left out: it measured nothing."""
    found = []
    for case in cases:
        scores = case.get("scores")
        if not scores or case.get("framing") != NEUTRAL or not scores.get("n") or not _readable(scores):
            continue
        golds = {str(y): sum(row.values()) for y, row in scores["confusion"].items()}
        label, count = max(golds.items(), key=lambda kv: kv[1])
        constant = count / scores["n"]
        if scores["accuracy"] is not None and scores["accuracy"] <= constant:
            found.append(
                {
                    "case": str(case["case"]),
                    "accuracy": float(scores["accuracy"]),
                    "constant": constant,
                    "label": label,
                }
            )
    return found


def entries(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A summary.json's ``at_chance`` (empty for a summary written before the key, or a stand-in)."""
    found = summary.get("at_chance")
    return [e for e in found if isinstance(e, Mapping)] if isinstance(found, list) else []


def short_text(entry: Mapping[str, Any]) -> str:
    """``20.0% right; always answering 'less' would be 40.0% right``: one case against the constant answer."""
    return (
        f"{percent(entry.get('accuracy'))} right; always answering {str(entry.get('label'))!r} would be "
        f"{percent(entry.get('constant'))} right"
    )


def note(entry: Mapping[str, Any]) -> str:
    """The end-of-run line: ``AT CHANCE: <case> answers 20.0% right, no better than always answering 'less'
    (40.0%): passing its ceilings says nothing about its arithmetic``."""
    return (
        f"AT CHANCE: {entry['case']} answers {percent(entry['accuracy'])} right, no better than always "
        f"answering {str(entry['label'])!r} ({percent(entry['constant'])}): passing its ceilings says nothing "
        "about its arithmetic"
    )
