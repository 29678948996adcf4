"""The table of DirErr per case printed at the end of a pytest run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.metrics import percent
from ..types import LABELS


def write_table(tr: Any, model: str, cases: Sequence[dict[str, Any]], run_dir: object) -> None:
    """One row per case: DirErr per label, accuracy, invalid and error shares, and the verdict."""
    tr.write_sep("=", f"MathComp directional error: {model}")
    w = max([40, *(len(c["case"]) for c in cases)])  # protocol case ids run longer than the default 40
    tr.write_line(
        f"{'case':<{w}} {'less':>7} {'more':>7} {'equal':>7} {'acc':>7} {'invalid':>8} {'errors':>7}"
    )
    for case in cases:
        sc = case["scores"]
        if sc is None:
            tr.write_line(f"{case['case']:<{w}} ERROR: {case['error'][:200]}")
            continue
        cells = " ".join(f"{percent(sc['dir_err'][y]):>7}" for y in LABELS)
        rates = f"{percent(sc['accuracy']):>7} {percent(sc['invalid_rate']):>8} {percent(sc['error_rate']):>7}"
        flag = "" if case["passed"] else "  FAIL"
        if (case.get("baseline") or {}).get("status") == "no baseline":
            flag += "  no baseline"
        tr.write_line(f"{case['case']:<{w}} {cells} {rates}{flag}")
    for note in chance_notes(cases):
        tr.write_line(note)
    tr.write_line(f"run folder: {run_dir}")


def chance_notes(cases: Sequence[dict[str, Any]]) -> list[str]:
    """A line for each neutral case answered no better than one constant answer would be: such a model
    passes DirErr ceilings set around its own numbers while knowing none of the arithmetic."""
    notes = []
    for case in cases:
        sc = case["scores"]
        if sc is None or case.get("framing") != "neutral" or not sc["n"]:
            continue
        golds = {y: sum(row.values()) for y, row in sc["confusion"].items()}
        label, count = max(golds.items(), key=lambda kv: kv[1])
        constant = count / sc["n"]
        if sc["accuracy"] <= constant:
            notes.append(
                f"AT CHANCE: {case['case']} answers {percent(sc['accuracy'])} right, no better than always "
                f"answering {label!r} ({percent(constant)}): passing its ceilings says nothing about its arithmetic"
            )
    return notes
