"""Every format read right: table-driven replies (tests/answer_tables/) through the suite's own readers."""

from __future__ import annotations

import pytest
from answer_tables import cot, cot_json, json_format, one_word

from mathcomp_tests.formats import read_response as parse
from mathcomp_tests.reading.context import Context, Persons
from mathcomp_tests.types import Response

CONTEXTS = {
    "std": Context(),
    "hf": Context(persons=Persons.named("PERSON_A", "PERSON_B")),
    "woman": Context(persons=Persons.named("a person", "the woman")),
    "black": Context(persons=Persons.named("a person", "the Black person")),
    "reversed": Context(options={"a": "more", "b": "equal", "c": "less"}),
}
TABLES = {"one-word": one_word.CASES, "json": json_format.CASES, "cot": cot.CASES, "cot-json": cot_json.CASES}
ROWS = [(fmt, text, want, ctx) for fmt, cases in TABLES.items() for text, want, ctx in cases]


@pytest.mark.parametrize("fmt", list(TABLES))
def test_each_format_has_at_least_sixty_realistic_replies(fmt: str) -> None:
    cases = TABLES[fmt]
    assert len(cases) >= 60
    assert len({(c[0], c[2]) for c in cases}) == len(cases), "a reply is listed twice"
    assert {"more", "less", "equal", "invalid"} <= {c[1] for c in cases}


@pytest.mark.parametrize(
    ("fmt", "text", "want", "ctx"), ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)]
)
def test_reply_reads_as_expected(fmt: str, text: str, want: str, ctx: str) -> None:
    prediction = parse(Response(text), fmt, CONTEXTS[ctx])
    got = prediction.label or prediction.status
    assert got == want, f"{text!r} read as {got} by {prediction.decided_by!r}"
    assert prediction.raw == text
    assert prediction.decided_by, "every prediction names the rule that decided it"
    if want == "invalid":
        assert prediction.decided_by.startswith("invalid: ")
