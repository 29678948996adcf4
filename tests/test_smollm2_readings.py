"""The readers against a person's reading of SmolLM2-135M-Instruct's real answers.

tests/answer_tables/smollm2.jsonl holds 70 answers (neutral framing, question at the end, greedy; 25
scenarios in one-word and json, 10 in cot and cot-json cut at 160 new tokens), collected by `python -m
training.smollm2_answers`, each read by hand: `reading` is the label the answer gives for PERSON_B against
PERSON_A, or `invalid` (with `why`). The readers must agree with every reading except the known
disagreements below, and those must still disagree (fixed ones leave the list). The per-format table is the
one docs/reading-answers.md prints."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from mathcomp_tests.formats import NAMES, read_text
from mathcomp_tests.reading.context import Context

HERE = Path(__file__).parent
TABLE = HERE / "answer_tables" / "smollm2.jsonl"
DOCS = HERE.parent / "docs" / "reading-answers.md"
ROWS = [json.loads(line) for line in TABLE.read_text(encoding="utf-8").splitlines()]

KNOWN: dict[str, str] = {
    "100-neutral-end-std-cot": "the closing sentences are a tautology; the reader takes the one before, 'the same', "
    "without seeing that earlier sentences said 'half as far' and '1.5 times as many'",
    "217-neutral-end-std-cot-json": "prose without JSON: the reader takes the copied example's 'Person B spent more' "
    "as the conclusion; telling an echoed example from a claim needs the prompt's example text",
}
"""Answers a reader gets wrong with no clear fix, by fixture id: why the rule is kept."""


def reader_says(row: dict[str, object]) -> str:
    options = row["options"]
    assert isinstance(options, dict)
    reading = read_text(str(row["raw"]), str(row["format"]), Context(options=options))
    return reading.label or "invalid"


def table() -> dict[str, Counter[str]]:
    counts: dict[str, Counter[str]] = {f: Counter() for f in NAMES}
    for row in ROWS:
        counts[row["format"]]["agree" if reader_says(row) == row["reading"] else "wrong"] += 1
    return counts


def test_every_answer_was_read_by_hand() -> None:
    assert len(ROWS) >= 70 and {r["format"] for r in ROWS} == set(NAMES)
    for row in ROWS:
        assert row["reading"] in ("less", "more", "equal", "invalid"), row["id"]
        assert row["reading"] != "invalid" or row["why"], f"{row['id']}: an invalid reading says why"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_the_reader_reads_it_as_a_person_does(row: dict[str, object]) -> None:
    got = reader_says(row)
    if row["id"] in KNOWN:
        assert got != row["reading"], f"{row['id']} is read right now: take it off KNOWN"
    else:
        assert got == row["reading"], f"{row['format']} reader read {got!r} in {row['raw']!r}; {row['why']}"


def test_the_documented_table_is_the_measured_one() -> None:
    documented = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\| `([a-z-]+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", line)
        if match:
            name, n, invalid, agree, wrong = match.groups()
            documented[name] = (int(n), int(invalid), int(agree), int(wrong))
    measured = {
        f: (c["agree"] + c["wrong"], sum(r["format"] == f and r["reading"] == "invalid" for r in ROWS),
            c["agree"], c["wrong"])
        for f, c in table().items()
    }
    assert documented == measured
