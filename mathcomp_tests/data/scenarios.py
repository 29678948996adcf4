"""Load scenarios from a CSV in the original MathComp schema and verify every row exactly."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from ..types import LABELS, Label, Scenario
from .equations import EquationError, compare, evaluate, show

COLUMNS: tuple[str, ...] = (
    "ID",
    "sentence1",
    "sentence2",
    "category",
    "studied_quantity",
    "result_comparison",
    "equation_sentence1",
    "equation_sentence2",
    "task",
    "natural_language_coefficient",
)
_BOOLS = {"true": True, "false": False}
ProblemKind = Literal["row", "equation", "label", "duplicate"]


class DatasetError(ValueError):
    """A dataset that cannot be used; the message names the file, the rows and what was expected."""


@dataclass(frozen=True)
class Row:
    """One data row as read, before any policy: its scenario, or what keeps it from verifying.

    ``scenario`` carries the stored (published) label; it is None when the row cannot be scored at all.
    ``kind`` names the problem: ``row`` (a value missing or malformed), ``equation``, ``label`` (the
    equations give another label) or ``duplicate`` (an ID seen before); None when the row verifies.
    """

    line: int
    values: dict[str, str]
    scenario: Scenario | None
    problem: str | None = None
    kind: ProblemKind | None = None

    @property
    def id(self) -> str:
        return self.values.get("ID") or "?"


class _Problem(DatasetError):
    def __init__(self, kind: ProblemKind, message: str, scenario: Scenario | None = None):
        super().__init__(message)
        self.kind = kind
        self.scenario = scenario


def read(path: str | Path) -> list[Row]:
    """Every row of ``path`` with its verification result, for the audit and the dataset policies.

    Raises DatasetError only when the file as a whole cannot be used (unreadable, no header, missing
    columns, no rows); a bad row is returned with its problem instead.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the dataset: {exc}") from exc
    reader = csv.DictReader(text.splitlines(keepends=True))
    header = reader.fieldnames or []
    if not header:
        raise DatasetError(f"{path}: the file is empty; expected a header line with {', '.join(COLUMNS)}")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise DatasetError(
            f"{path}, line 1: missing column(s) {', '.join(missing)}; "
            f"expected {', '.join(COLUMNS)}, found {', '.join(header)}"
        )
    rows: list[Row] = []
    seen: dict[str, int] = {}
    for raw in reader:
        values = {c: (raw.get(c) or "").strip() for c in COLUMNS}
        line = reader.line_num
        try:
            row = Row(line, values, _verify(values))
        except _Problem as exc:
            row = Row(line, values, exc.scenario, str(exc), exc.kind)
        if row.kind is None and row.id in seen:
            problem = f"ID {row.id} already used on line {seen[row.id]}"
            row = Row(line, values, row.scenario, problem, "duplicate")
        elif row.kind is None:
            seen[row.id] = line
        rows.append(row)
    if not rows:
        raise DatasetError(f"{path}: the header is there but no scenario rows follow")
    return rows


def where(path: str | Path, row: Row) -> str:
    """How an error names a row: file, line and ID."""
    return f"{path}, line {row.line}, row ID {row.id}"


def load(path: str | Path) -> list[Scenario]:
    """Every row of ``path`` as a Scenario, or a DatasetError listing every row that is wrong."""
    rows = read(path)
    problems = [f"{where(path, r)}: {r.problem}" for r in rows if r.problem]
    if problems:
        shown = "\n  ".join(problems[:25])
        more = f"\n  ... and {len(problems) - 25} more" if len(problems) > 25 else ""
        raise DatasetError(f"{len(problems)} invalid row(s) in {path}:\n  {shown}{more}")
    return [r.scenario for r in rows if r.scenario is not None]


def _verify(values: dict[str, str]) -> Scenario:
    empty = [c for c in COLUMNS if not values[c]]
    if empty:
        raise _Problem("row", f"empty value in {', '.join(empty)}")
    stored = values["result_comparison"].lower()
    if stored not in LABELS:
        raise _Problem("row", f"result_comparison is {stored!r}; expected one of {', '.join(LABELS)}")
    verbal = _BOOLS.get(values["natural_language_coefficient"].lower())
    if verbal is None:
        raise _Problem(
            "row",
            f"natural_language_coefficient is {values['natural_language_coefficient']!r}; expected TRUE or FALSE",
        )
    try:
        total_a = evaluate(values["equation_sentence1"])
        total_b = evaluate(values["equation_sentence2"])
    except EquationError as exc:
        raise _Problem("equation", f"bad equation: {exc}") from exc
    scenario = Scenario(
        id=values["ID"],
        text_a=values["sentence1"],
        text_b=values["sentence2"],
        expr_a=values["equation_sentence1"],
        expr_b=values["equation_sentence2"],
        total_a=total_a,
        total_b=total_b,
        label=cast(Label, stored),
        category=values["category"],
        quantity=values["studied_quantity"],
        task=values["task"],
        verbal=verbal,
    )
    computed = compare(total_a, total_b)
    if computed != stored:
        raise _Problem(
            "label",
            f"label disagrees with the equations: A totals {show(total_a)}, B totals {show(total_b)}, "
            f"so B is {computed!r}, but the row says {stored!r}",
            scenario,
        )
    return scenario


def first(scenarios: Sequence[Scenario], limit: int | None) -> list[Scenario]:
    """The first ``limit`` scenarios in file order (all when limit is None)."""
    return list(scenarios if limit is None else scenarios[:limit])
