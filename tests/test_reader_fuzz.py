"""Every reader takes any text: whatever a model writes, each format gives a label or `invalid` with a rule,
never an exception, and long or deeply nested answers are read in time (the cases a model has produced or
could: brace and bracket runs, 100,000-deep nesting, lone surrogates, 1 MB answers)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mathcomp_tests.formats import NAMES as READERS
from mathcomp_tests.formats import read_text as read
from mathcomp_tests.reading.context import Context, Persons

CONTEXTS = (
    Context(),
    Context(persons=Persons.named("a person", "the woman"), options={"a": "more", "b": "equal", "c": "less"}),
)
MB = 1_000_000

PIECES = (
    "{", "}", "[", "]", "(", ")", "{{", "}}", '"', "'", "'''", "\\", "#", ":", ",", " ", "\n", "\r\n", "\t",
    "```json\n", "```", '{"answer": "more"}', "{'answer': 'less'}", '"answer"', "'answer':", '"more"', "equal",
    "less", "more", "Person A", "Person B", "A", "B", "B)", "(C)", "the woman", "spends", "more than",
    "less time than", "the same", "as much as", "by", "not", "probably", "Answer:", "The answer is", "Therefore",
    "so", "**", ".", "?", "1", "-2.5e3", "0x1f", "1+2j", "True", "null", "NaN", "set()", "...", "\x00", "\ud800",
    "\udfff", "é", "İ", "\u2028", "\ufeff",
)  # fmt: skip
RUNS = (
    "{", "[", "(", "{'a': ", '{"a": ', "{#", "A ", " ", "more ", "Person A more ", "answer ", "'", '"', "\\",
)  # fmt: skip

pieces = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
any_text = st.text(st.characters(exclude_categories=()), max_size=200)
runs = st.tuples(pieces, st.sampled_from(RUNS), st.integers(1, 5_000), pieces).map(
    lambda t: t[0] + t[1] * t[2] + t[3]
)


@settings(max_examples=80, deadline=None)
@given(st.one_of(pieces, any_text, runs))
@example('{{"answer": "more"}}')
@example("{[1]: 2}")
@example("{" * 500_000 + '{"answer": "more"}')
@example("[" * 100_000)
@example('{"answer": ' + "[" * 20_000)
@example(("{" * 1_000 + '{"answer": "more"} Person A spends more. ') * (MB // 1_040))
@example("(" * 20_000 + "{" * 20_000)
@example("Person A spends more time than Person B. " * 1_000)
@example("A " * 20_000)
@example("more " * 5_000 + "than Person B")
@example("x" + " " * 50_000 + "y")
@example("answer" + " " * 50_000 + "x")
@example("{'a': " * 5_000)
@example('{"' * 20_000)
@example("{#" * 5_000 + "\n" + "1, " * 10_000)
@example("\ud800" * 1_000 + '{"answer": "less"}' + "\udfff")
@example("{\"answer\": \"more\"}\x00{'answer': 'less'}")
@example('{"answer": ' + "1" * 5_000 + "}")
@example("{0x" + "f" * 4_000 + ": 'more'}")
def test_every_reader_returns_a_label_or_invalid(text: str) -> None:
    for context in CONTEXTS if len(text) < 10_000 else CONTEXTS[:1]:
        for fmt in READERS:
            reading = read(text, fmt, context)
            assert reading.label in ("less", "more", "equal", None)
            assert reading.rule
            if reading.label is None:
                assert reading.rule.startswith("invalid: ")
