"""Load scenarios from a CSV in the original MathComp schema and verify every row exactly."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from ..types import LABELS, Label, Scenario
from .equations import EquationError, compare, evaluate, show
from .quoting import quote

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
MAX_FIELD = 10_000
"""The longest field accepted, in characters; MathComp's longest has 282."""
PLACEHOLDERS = {"sentence1": ("a", "[PERSON_A]"), "sentence2": ("b", "[PERSON_B]")}
"""The person each sentence must name, and the placeholder the prompt replaces with that person's name."""
_PERSON = re.compile(r"\[person[ _]?(a|b)\]", re.IGNORECASE)
"""Every spelling of a placeholder the prompts fill in (the original writes [Person_A] in some rows)."""
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

    Raises DatasetError only when the file as a whole cannot be used (unreadable, no header, a column
    missing or named twice, a NUL byte, a field beyond MAX_FIELD, no rows); a bad row is returned with
    its problem instead.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the dataset: {exc}") from exc
    records = _records(path, text)
    header_line, header = next(records, (1, []))
    if not header:
        raise DatasetError(f"{path}: the file is empty; expected a header line with {', '.join(COLUMNS)}")
    _check_header(f"{path}, line {header_line}", header)
    at = {c: header.index(c) for c in COLUMNS}
    rows: list[Row] = []
    seen: dict[str, int] = {}
    for line, fields in records:
        values = {c: (fields[i] if i < len(fields) else "").strip() for c, i in at.items()}
        try:
            _check_width(fields, header)
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


def _records(path: Path, text: str) -> Iterator[tuple[int, list[str]]]:
    """Each non-blank record with the line it ends on; a NUL byte or an oversized field stops the file."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] = []
    ended = 0
    while True:
        try:
            start, fields = ended + 1, next(reader)
            ended = reader.line_num
        except StopIteration:
            return
        except csv.Error as exc:
            if "field limit" in str(exc):
                raise DatasetError(
                    f"{path}, line {reader.line_num}: a field is longer than {csv.field_size_limit()} "
                    f"characters; expected at most {MAX_FIELD} characters per field"
                ) from exc
            raise DatasetError(f"{path}, line {reader.line_num}: not valid CSV: {exc}") from exc
        line = reader.line_num
        for i, field in enumerate(fields):
            if "\0" in field:
                raise DatasetError(
                    f"{path}, line {line}, {_column(header, i)}: a NUL byte; expected text "
                    "(is the file binary or damaged?)"
                )
            if len(field) > MAX_FIELD:
                raise DatasetError(
                    f"{path}, line {line}, {_column(header, i)}: {len(field)} characters; "
                    f"expected at most {MAX_FIELD} characters per field"
                )
        if header and fields:
            _check_quotes(path, text, header, fields, start, line)
        if fields:
            header = header or fields
            yield line, fields


def _check_quotes(path: Path, text: str, header: list[str], fields: list[str], start: int, end: int) -> None:
    """A record over several lines whose width is wrong, or that runs to the end of the file, is a quote
    left open: the rows after it were read into one field, which would be reported as empty values."""
    spans = [i for i, field in enumerate(fields) if "\n" in field or "\r" in field]
    last = end >= text.count("\n") + (0 if text.endswith("\n") else 1)
    if not spans and not last:
        return
    at_end = last and _unclosed(text)
    first = spans[0] if spans else len(fields) - 1
    opened = start + sum(f.count("\n") for f in fields[:first])
    if (spans and len(fields) != len(header)) or at_end:
        closes = (
            "never closes, so the rest of the file was read as one field"
            if at_end
            else f"closes only on line {end}, so the lines between were read as one field"
        )
        raise DatasetError(
            f"{path}, line {opened}, {_column(header, first)}: a quote opens here and {closes}; expected each "
            'quoted field to close on its own line (add the closing quote, or write a quote inside a field as "")'
        )


def _unclosed(text: str) -> bool:
    """True when the file ends inside a quoted field (the lenient reader takes that field to the end)."""
    try:
        for _ in csv.reader(io.StringIO(text, newline=""), strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _column(header: Sequence[str], index: int) -> str:
    """How an error names a field: the header's name for it, and its position."""
    name = header[index] if index < len(header) else ""
    return f"{name} (column {index + 1})" if name else f"column {index + 1}"


def _check_header(where: str, header: list[str]) -> None:
    """Every MathComp column present, none named twice (a reader would silently keep only one of them)."""
    first: dict[str, int] = {}
    for i, name in enumerate(header):
        if name and name in first:
            raise DatasetError(
                f"{where}, column {i + 1}: column {quote(name)} is named again (first at column "
                f"{first[name] + 1}); expected each column once"
            )
        first.setdefault(name, i)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        found = ", ".join(quote(h, 40) for h in header[:20]) + (", ..." if len(header) > 20 else "")
        raise DatasetError(
            f"{where}: missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}, found {found}"
        )


def _check_width(fields: list[str], header: list[str]) -> None:
    """A field beyond the header's columns would be dropped unseen; most often a comma left unquoted."""
    extra = len(fields) - len(header)
    if extra > 0:
        raise _Problem(
            "row",
            f"{extra} field(s) after the header's {len(header)} columns, from column {len(header) + 1}; "
            "expected one field per column (is a comma in a sentence unquoted?)",
        )


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
        raise _Problem("row", f"result_comparison is {quote(stored)}; expected one of {', '.join(LABELS)}")
    verbal = _BOOLS.get(values["natural_language_coefficient"].lower())
    if verbal is None:
        raise _Problem(
            "row",
            f"natural_language_coefficient is {quote(values['natural_language_coefficient'])}; "
            "expected TRUE or FALSE",
        )
    for column, (person, placeholder) in PLACEHOLDERS.items():
        if person not in {m.group(1).lower() for m in _PERSON.finditer(values[column])}:
            raise _Problem(
                "row",
                f"{column} has no {placeholder} placeholder, so its prompt would never name Person "
                f"{person.upper()}; expected {placeholder} where the sentence names that person",
            )
    totals = []
    for column in ("equation_sentence1", "equation_sentence2"):
        try:
            totals.append(evaluate(values[column]))
        except EquationError as exc:
            raise _Problem("equation", f"bad equation in {column}: {exc}") from exc
    total_a, total_b = totals
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
