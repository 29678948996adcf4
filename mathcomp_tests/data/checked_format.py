"""The verification cache's file format: rows and audit findings as plain JSON, checked field by field on load.

The cache folder is writable by anyone who can run the suite, so what is read back is treated as untrusted
data: it is parsed as JSON only, and every object must have exactly the expected keys and value types, or
the whole file is refused (``None``) and the dataset is verified again. Nothing read is ever executed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict
from fractions import Fraction
from typing import Any, get_args

from ..types import LABELS, Scenario
from .audit import READING, VERIFICATION, Finding
from .scenarios import COLUMNS, ProblemKind, Row

FORMAT = "mathcomp-checked-dataset"
VERSION = 1
Checked = tuple[list[Row], list[list[Finding]]]

_RATIONAL = re.compile(r"-?[0-9]{1,4000}/[0-9]{1,4000}")
_PROBLEMS = frozenset(get_args(ProblemKind))
_FINDINGS = frozenset((*VERIFICATION, *READING))


class _Refused(ValueError):
    """The file is not a cache entry this code wrote."""


def dumps(rows: list[Row], findings: list[list[Finding]], sha256: str) -> str:
    """The cache entry for a dataset whose bytes hash to ``sha256``."""
    entries = [
        {
            "line": row.line,
            "values": row.values,
            "scenario": _scenario_out(row.scenario) if row.scenario else None,
            "problem": row.problem,
            "kind": row.kind,
            "findings": [asdict(f) for f in found],
        }
        for row, found in zip(rows, findings, strict=True)
    ]
    return json.dumps({"format": FORMAT, "version": VERSION, "sha256": sha256, "rows": entries})


def loads(text: str, sha256: str) -> Checked | None:
    """The rows and findings stored in ``text`` for the dataset ``sha256``; None unless every field checks."""
    try:
        top = _object(json.loads(text), {"format": str, "version": int, "sha256": str, "rows": list})
        if (top["format"], top["version"], top["sha256"]) != (FORMAT, VERSION, sha256) or not top["rows"]:
            raise _Refused("another format, version or dataset")
        rows: list[Row] = []
        findings: list[list[Finding]] = []
        for entry in top["rows"]:
            row, found = _row(entry)
            rows.append(row)
            findings.append(found)
        return rows, findings
    except (_Refused, ValueError, ZeroDivisionError, RecursionError):
        return None


Spec = Mapping[str, type | tuple[type, None]]
"""An object's keys, each with its value's type; a (type, None) pair also allows null."""

_ROW: Spec = {
    "line": int,
    "values": dict,
    "scenario": (dict, None),
    "problem": (str, None),
    "kind": (str, None),
}
_SCENARIO: Spec = {
    "id": str,
    "text_a": str,
    "text_b": str,
    "expr_a": str,
    "expr_b": str,
    "total_a": str,
    "total_b": str,
    "label": str,
    "category": str,
    "quantity": str,
    "task": str,
    "verbal": bool,
}
_FINDING: Spec = {
    "id": str,
    "line": int,
    "kind": str,
    "message": str,
    "literal": (str, None),
    "stored": (str, None),
}


def _row(entry: object) -> tuple[Row, list[Finding]]:
    fields = _object(entry, {**_ROW, "findings": list})
    values = fields["values"]
    if set(values) != set(COLUMNS) or not all(isinstance(v, str) for v in values.values()):
        raise _Refused("values")
    if fields["kind"] is not None and fields["kind"] not in _PROBLEMS:
        raise _Refused("kind")
    scenario = _scenario_in(fields["scenario"]) if fields["scenario"] is not None else None
    row = Row(fields["line"], values, scenario, fields["problem"], fields["kind"])
    return row, [_finding(f) for f in fields["findings"]]


def _scenario_out(scenario: Scenario) -> dict[str, Any]:
    fields = asdict(scenario)
    fields["total_a"], fields["total_b"] = _rational(scenario.total_a), _rational(scenario.total_b)
    return fields


def _scenario_in(entry: object) -> Scenario:
    fields = _object(entry, _SCENARIO)
    if fields["label"] not in LABELS:
        raise _Refused("label")
    for side in ("total_a", "total_b"):
        if not _RATIONAL.fullmatch(fields[side]):
            raise _Refused(side)
        fields[side] = Fraction(fields[side])
    return Scenario(**fields)


def _finding(entry: object) -> Finding:
    fields = _object(entry, _FINDING)
    if fields["kind"] not in _FINDINGS or (fields["literal"] is not None and fields["literal"] not in LABELS):
        raise _Refused("finding")
    return Finding(**fields)


def _rational(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def _object(value: object, spec: Spec) -> dict[str, Any]:
    """``value`` when it is a JSON object with exactly ``spec``'s keys, each of its type (or null)."""
    if not isinstance(value, dict) or set(value) != set(spec):
        raise _Refused("keys")
    for key, expected in spec.items():
        kind, nullable = (expected[0], True) if isinstance(expected, tuple) else (expected, False)
        item = value[key]
        if not (_is(item, kind) or (nullable and item is None)):
            raise _Refused(key)
    return dict(value)


def _is(item: object, kind: type) -> bool:
    """isinstance, except that a JSON true/false is not an int."""
    return isinstance(item, kind) and (kind is bool or not isinstance(item, bool))
