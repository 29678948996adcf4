"""The reported reading defects: an answer no reader can read is `invalid` with the rule that says why, never
an error; and reading takes time in proportion to the answer, whatever it holds."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap

import pytest
from helpers.suite_runner import REPO

from mathcomp_tests.formats import read_response as parse
from mathcomp_tests.types import Prediction, Response

JSON_FORMATS = ("json", "cot-json")


def answer(text: str, fmt: str) -> Prediction:
    return parse(Response(text), fmt)


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_doubled_braces_are_read_through_the_object_inside(fmt: str) -> None:
    # The outer `{` opens no object (a dict is no key, in JSON or Python); the inner one is a plain answer.
    prediction = answer('{{"answer": "more"}}', fmt)
    assert prediction == Prediction("more", "ok", '{{"answer": "more"}}')
    assert prediction.decided_by == "json answer field: label word"


@pytest.mark.parametrize(
    ("text", "json_rule"),
    [
        ("{[1]: 2}", "invalid: no JSON object"),
        ("{[1], [2]}", "invalid: no JSON object"),
        ("{{1: 2}: 'more'}", "invalid: no JSON object with an answer field"),
        ("{(1, [2]): 'more'}", "invalid: no JSON object"),
        ('{"answer": ' + "[" * 100_000, "invalid: no JSON object"),
        ('{"answer": ' + "[" * 100_000 + "]" * 100_000 + "}", "invalid: the answer field is list, not text"),
        ('{"answer": ' + "1" * 5_000 + "}", "invalid: no JSON object"),
        ("{0x" + "f" * 4_000 + ": 'more'}", "invalid: no JSON object with an answer field"),
    ],
    ids=[
        "list-key",
        "set-of-lists",
        "dict-key",
        "tuple-key",
        "deep-open",
        "deep-closed",
        "long-int",
        "huge-key",
    ],
)
@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_an_unreadable_object_is_invalid_with_its_reason(text: str, json_rule: str, fmt: str) -> None:
    prediction = answer(text, fmt)
    assert prediction.status == "invalid" and prediction.label is None
    assert prediction.raw == text
    if fmt == "json":
        assert prediction.decided_by == json_rule
    else:
        assert prediction.decided_by.startswith(json_rule)


def test_an_object_nested_deeper_than_pythons_stack_is_still_read() -> None:
    text = '{"result": ' * 5_000 + '{"answer": "less"}' + "}" * 5_000
    assert answer(text, "json") == Prediction("less", "ok", text)


def test_literal_eval_reads_each_character_of_a_brace_run_about_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python-literal reading used to try `ast.literal_eval` from every `{` to every `}` after it."""
    read_chars = [0]
    literal_eval = ast.literal_eval

    def counted(source: str) -> object:
        read_chars[0] += len(source)
        return literal_eval(source)

    monkeypatch.setattr(ast, "literal_eval", counted)
    for text in [
        "{" * 2_000 + "{'answer': 'more'}",
        "{'a': " * 400 + "{'answer': 'more'}" + "}" * 300,
        "{'a': [1, (2, {3: 'x'}), 'b'}, " * 100 + "{'answer': 'more'}",
    ]:
        read_chars[0] = 0
        assert answer(text, "json").label == "more"
        assert read_chars[0] <= 2 * len(text)


def test_the_reported_brace_run_is_read_at_all() -> None:
    """500,000 braces before the object did not finish in 120 s; read in a child so a hang fails the test."""
    code = textwrap.dedent(
        """
        from mathcomp_tests.formats import read_text as read
        text = "{" * 500_000 + '{"answer": "more"}'
        print(read(text, "json").label, read(text, "cot-json").label)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["more", "more"]


NO_LABEL = ("invalid: no label read", "invalid: no conclusion read")
LONG_PROSE = {
    '"A " * 100_000': NO_LABEL,
    '"more " * 40_000 + "than Person B"': ("less", "less"),
    '"x" + " " * 200_000 + "y"': NO_LABEL,
    '"Answer" + " " * 200_000 + "x"': NO_LABEL,
    '"the same" + " " * 200_000 + "x"': NO_LABEL,
}
"""Answers (as Python expressions) whose reading took time growing with the square of their length, and how
one-word and CoT read them: slices of the answer for every name or comparison, regexes that backtrack over
white space."""


def test_one_word_and_cot_read_long_prose_at_all() -> None:
    """Read in a child, so that a hang fails the test."""
    code = textwrap.dedent(
        f"""
        from mathcomp_tests.formats import read_text as read
        for text in [{", ".join(LONG_PROSE)}]:
            readings = [read(text, fmt) for fmt in ("one-word", "cot")]
            print(*(reading.label or reading.rule for reading in readings), sep="|")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert [tuple(line.split("|")) for line in done.stdout.splitlines()] == list(LONG_PROSE.values())
