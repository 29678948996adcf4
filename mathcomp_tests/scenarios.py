"""Load scenarios from a CSV in the original MathComp schema and verify every row exactly."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from .equations import EquationError, compare, evaluate, show
from .types import LABELS, Scenario

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


class DatasetError(ValueError):
    """A dataset that cannot be used; the message names the file, the rows and what was expected."""


def load(path: str | Path) -> list[Scenario]:
    """Every row of ``path`` as a Scenario, or a DatasetError listing every row that is wrong."""
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
    scenarios: list[Scenario] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for row in reader:
        where = f"{path}, line {reader.line_num}, row ID {row.get('ID') or '?'}"
        try:
            scenario = _verify(row)
        except DatasetError as exc:
            problems.append(f"{where}: {exc}")
            continue
        if scenario.id in seen:
            problems.append(f"{where}: ID {scenario.id} already used on line {seen[scenario.id]}")
            continue
        seen[scenario.id] = reader.line_num
        scenarios.append(scenario)
    if problems:
        shown = "\n  ".join(problems[:25])
        more = f"\n  ... and {len(problems) - 25} more" if len(problems) > 25 else ""
        raise DatasetError(f"{len(problems)} invalid row(s) in {path}:\n  {shown}{more}")
    if not scenarios:
        raise DatasetError(f"{path}: the header is there but no scenario rows follow")
    return scenarios


def _verify(row: dict[str, str | None]) -> Scenario:
    values = {c: (row.get(c) or "").strip() for c in COLUMNS}
    empty = [c for c in COLUMNS if not values[c]]
    if empty:
        raise DatasetError(f"empty value in {', '.join(empty)}")
    stored = values["result_comparison"].lower()
    if stored not in LABELS:
        raise DatasetError(f"result_comparison is {stored!r}; expected one of {', '.join(LABELS)}")
    verbal = _BOOLS.get(values["natural_language_coefficient"].lower())
    if verbal is None:
        raise DatasetError(
            f"natural_language_coefficient is {values['natural_language_coefficient']!r}; expected TRUE or FALSE"
        )
    try:
        total_a = evaluate(values["equation_sentence1"])
        total_b = evaluate(values["equation_sentence2"])
    except EquationError as exc:
        raise DatasetError(f"bad equation: {exc}") from exc
    computed = compare(total_a, total_b)
    if computed != stored:
        raise DatasetError(
            f"label disagrees with the equations: A totals {show(total_a)}, B totals {show(total_b)}, "
            f"so B is {computed!r}, but the row says {stored!r}"
        )
    return Scenario(
        id=values["ID"],
        text_a=values["sentence1"],
        text_b=values["sentence2"],
        expr_a=values["equation_sentence1"],
        expr_b=values["equation_sentence2"],
        total_a=total_a,
        total_b=total_b,
        label=computed,
        category=values["category"],
        quantity=values["studied_quantity"],
        task=values["task"],
        verbal=verbal,
    )


def first(scenarios: Sequence[Scenario], limit: int | None) -> list[Scenario]:
    """The first ``limit`` scenarios in file order (all when limit is None)."""
    return list(scenarios if limit is None else scenarios[:limit])
