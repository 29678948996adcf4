"""A run folder's results.jsonl read back, one way for every reader: the baseline (`--baseline RUN_DIR`),
`mathcomp diff`, `mathcomp plan --base`, the merge and the report rebuilt from a folder.

Strict (a finished run's answers compared or merged): a line that is not a JSON record, a last line cut short,
a record without the keys asked for, or a case that answered other scenarios than its summary.json lists (a
file cut at a line's end) is damage, named with its file and line. Lenient (the report of a run a kill cut
short): a cut last line is dropped with a note; any other damage is still named. The caller says which."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
ANSWER_KEYS = ("case", "scenario", "gold", "status", "label")
"""What a record must hold to be compared as an answer."""


class RunFolderError(ValueError):
    """A results.jsonl that is not what a run writes; the message names the file and the line."""


@dataclass(frozen=True)
class Records:
    records: list[dict[str, Any]]
    note: str | None
    """Lenient reading only: the cut last line that was dropped; None when there was none."""


def read(path: Path, *, strict: bool, needed: Sequence[str] = ()) -> Records:
    """Every record of the results.jsonl at ``path`` (none when there is no such file)."""
    if not path.exists():
        return Records([], None)
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            if number < len(lines):
                raise RunFolderError(f"{path}: line {number} is not a JSON record ({exc})") from exc
            if strict:
                raise RunFolderError(cut_short(path, number)) from exc
            return Records(records, dropped_note(path, number, len(records)))
        if not isinstance(record, dict):
            raise RunFolderError(f"{path}: line {number} is not a JSON record (a {type(record).__name__})")
        missing = [k for k in needed if k not in record]
        if missing:
            raise RunFolderError(f"{path}: line {number} is not a result record (no {', '.join(missing)})")
        records.append(record)
    return Records(records, None)


def read_answers(path: Path, scenario_ids: Sequence[str] | None) -> list[dict[str, Any]]:
    """A finished run's answers, to compare: read strictly, every record an answer, and each case over
    exactly ``scenario_ids`` (its summary.json's; None: not checked, a summary from before it listed them)."""
    records = read(path, strict=True, needed=ANSWER_KEYS).records
    if scenario_ids is not None:
        check_covered(path, records, scenario_ids)
    return records


def cut_short(path: Path, number: int) -> str:
    """A last line without its newline that does not parse: a write the process never ended."""
    return f"{path}: line {number} is cut short (the run was stopped while writing it)"


def dropped_note(path: Path, number: int, kept: int) -> str:
    """The note of a lenient reader that dropped such a line."""
    return f"{cut_short(path, number)}; dropped, the {kept} records before it kept"


def check_covered(path: Path, records: Iterable[Mapping[str, Any]], scenario_ids: Sequence[str]) -> None:
    """RunFolderError when a case of ``records`` answered other scenarios than ``scenario_ids`` (the run's
    summary.json lists them): a results.jsonl cut at a line's end, or records of another run."""
    listed = set(map(str, scenario_ids))
    answered: dict[str, set[str]] = {}
    for record in records:
        answered.setdefault(str(record["case"]), set()).add(str(record["scenario"]))
    for case, found in answered.items():
        if found != listed:
            missing, extra = sorted(listed - found), sorted(found - listed)
            parts = [f"{len(missing)} missing ({', '.join(missing[:3])})"] if missing else []
            parts += [f"{len(extra)} not listed ({', '.join(extra[:3])})"] if extra else []
            said = "; ".join(parts)
            raise RunFolderError(
                f"{path}: case {case} answered {len(found & listed)} of the {len(listed)} scenarios its "
                f"summary.json lists: {said} (a results.jsonl cut short, or another run's records)"
            )
