"""Whether a night's summary.json (read as JSON) has the shape history reads: valid JSON of the wrong
types (a case that is a number, ``"dir_err": null``, ``"cases_run": "28"``) is one line naming the file,
the field and what was expected, so that the night is skipped and the others drawn. A number that is
no number (NaN, Infinity: Python's JSON writes them) is not a wrong type: history shows it as missing.

``load_night`` reads a run folder's summary.json so checked: what `mathcomp history`, `mathcomp site`,
`mathcomp keep` and `mathcomp record` read of a night."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import summary_format
from ..report.standalone import DamagedRunError, load_summary
from ..types import LABELS

Check = Callable[[Any], bool]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _or_null(check: Check) -> Check:
    return lambda value: value is None or check(value)


NUMBER = (_number, "a number")
NUMBER_OR_NULL = (_or_null(_number), "a number or null")
COUNT = (_count, "a whole number at least 0")
COUNT_OR_NULL = (_or_null(_count), "a whole number at least 0, or null")
TEXT = (_text, "text")
TEXT_OR_NULL = (_or_null(_text), "text or null")
OBJECT_OR_NULL = (_or_null(lambda v: isinstance(v, dict)), "a JSON object or null")
LIST_OR_NULL = (_or_null(lambda v: isinstance(v, list)), "a list or null")
BOOLEAN = (lambda v: isinstance(v, bool), "true or false")

TOP = {
    "run_id": TEXT,
    "model": TEXT,
    "model_identity": TEXT_OR_NULL,
    "canonical": TEXT_OR_NULL,
    "resolved": TEXT_OR_NULL,
    "revision": TEXT_OR_NULL,
    "model_revision": TEXT_OR_NULL,
    "cases_run": COUNT,
    "cases_failed": COUNT,
    "scenarios": COUNT_OR_NULL,
    "prompt_set": TEXT_OR_NULL,
    "status": TEXT_OR_NULL,
    "incomplete_reasons": LIST_OR_NULL,
    "selection": OBJECT_OR_NULL,
    "dataset": OBJECT_OR_NULL,
    "baseline": OBJECT_OR_NULL,
    "generated_cases": LIST_OR_NULL,
}
"""summary.json's fields history reads, each with what it must hold (absent is allowed where history has a
default; load_summary requires run_id, model, cases, cases_run and cases_failed)."""
BASELINE = {"model": TEXT_OR_NULL, "model_identity": TEXT_OR_NULL}
DATASET = {"name": TEXT_OR_NULL}
CASE = {"passed": BOOLEAN, "scores": OBJECT_OR_NULL, "baseline": OBJECT_OR_NULL}
SCORES = {"n": COUNT, "accuracy": NUMBER_OR_NULL, "invalid_rate": NUMBER_OR_NULL}
CASE_BASELINE = {"status": TEXT_OR_NULL, "changes": OBJECT_OR_NULL}
CHANGE = {"difference": NUMBER_OR_NULL, "p_value": NUMBER_OR_NULL}


class BadField(ValueError):
    """A field of the wrong type: the message names the field, what was expected and what it held."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrong(where: str, expected: str, value: Any) -> BadField:
    return BadField(f"{where}: expected {expected}, got {_shown(value)}")


def _fields(
    found: Mapping[str, Any], rules: Mapping[str, tuple[Check, str]], prefix: str = "", required: bool = False
) -> None:
    """Each of ``rules``' keys that ``found`` has holds what its rule expects; with ``required``, it has each."""
    for key, (check, expected) in rules.items():
        if key not in found:
            if required:
                raise BadField(f"{prefix}{key}: expected {expected}, got nothing (no such key)")
        elif not check(found[key]):
            raise _wrong(prefix + key, expected, found[key])


def _case(case: Any, where: str) -> None:
    if not isinstance(case, dict):
        raise _wrong(where, "a case (a JSON object)", case)
    _fields(case, {"case": TEXT}, f"{where}.", required=True)
    _fields(case, CASE, f"{where}.")
    scores = case.get("scores")
    if scores is not None:
        _fields(scores, SCORES, f"{where}.scores.", required=True)
        dir_err = scores.get("dir_err")
        if not isinstance(dir_err, dict):
            raise _wrong(f"{where}.scores.dir_err", "a JSON object (DirErr per label)", dir_err)
        for label in LABELS:
            value = dir_err.get(label)
            if value is not None and not _number(value):
                raise _wrong(f"{where}.scores.dir_err.{label}", NUMBER_OR_NULL[1], value)
    compared = case.get("baseline")
    if compared is not None:
        _fields(compared, CASE_BASELINE, f"{where}.baseline.")
        for label, change in (compared.get("changes") or {}).items():
            if not isinstance(change, dict):
                raise _wrong(f"{where}.baseline.changes.{label}", "a JSON object", change)
            _fields(change, CHANGE, f"{where}.baseline.changes.{label}.")
            if change.get("difference") is not None:
                _fields(change, {"p_value": NUMBER}, f"{where}.baseline.changes.{label}.", required=True)


def check(summary: Mapping[str, Any]) -> None:
    """Raise BadField, naming the first field history cannot read (``cases[3].scores.dir_err``), if any."""
    _fields(summary, TOP)
    if not isinstance(summary.get("cases"), list):
        raise _wrong("cases", "a list of cases", summary.get("cases"))
    for i, case in enumerate(summary["cases"]):
        _case(case, f"cases[{i}]")
    for i, case in enumerate(summary.get("generated_cases") or []):
        if not isinstance(case, dict) or not _text(case.get("case")) or not BOOLEAN[0](case.get("passed", True)):
            raise _wrong(f"generated_cases[{i}]", "a case (a JSON object with its id as 'case')", case)
    for key, rules in (("baseline", BASELINE), ("dataset", DATASET)):
        _fields(summary.get(key) or {}, rules, f"{key}.")
    selection = summary.get("selection") or {}
    for key, value in selection.items():
        if value is not None and not isinstance(value, list):
            raise _wrong(f"selection.{key}", "a list or null", value)
    for i, reason in enumerate(summary.get("incomplete_reasons") or []):
        if not _text(reason):
            raise _wrong(f"incomplete_reasons[{i}]", "text", reason)


def problem(path: Path, summary: Mapping[str, Any]) -> str | None:
    """One line naming ``path``, the field and what was expected; None when history can read the summary."""
    try:
        check(summary)
    except BadField as exc:
        return f"{path}: {exc}"
    return None


def load_night(run_dir: Path) -> dict[str, Any]:
    """``load_summary`` of a night's run folder, every field history reads of the type it reads (``problem``):
    DamagedRunError naming the file and the field otherwise."""
    summary = load_summary(run_dir)
    if (bad := problem(summary_format.path_in(run_dir), summary)) is not None:
        raise DamagedRunError(bad)
    return summary
