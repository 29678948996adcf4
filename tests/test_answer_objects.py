"""Finding the objects in an answer: the linear-time scanners read exactly what `json.JSONDecoder.raw_decode` and
`ast.literal_eval` read from each `{` (compared against that rule, tried the slow way, on short texts), go
past what those raise on, and read each character a bounded number of times on the worst inputs."""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mathcomp_tests.reading.json_scan import JsonObjects
from mathcomp_tests.reading.literal_scan import BUDGET_PER_CHAR, MAX_LEVELS, PyLiterals
from mathcomp_tests.reading.objects import found_by, objects


def slow_objects(text: str) -> Iterator[dict]:
    """The rule as it was first written: `raw_decode` at each `{`, else `literal_eval` up to each `}`."""
    decoder = json.JSONDecoder()
    position = 0
    while (start := text.find("{", position)) >= 0:
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            obj, end = slow_literal(text, start)
        if isinstance(obj, dict):
            yield obj
            position = end
        else:
            position = start + 1


def slow_literal(text: str, start: int) -> tuple[object, int]:
    for end in (m.end() for m in re.finditer(r"\}", text[start:])):
        try:
            value = ast.literal_eval(text[start : start + end])
        except Exception:  # noqa: BLE001 - the rule: whatever literal_eval refuses is no literal
            continue
        if isinstance(value, dict):
            return value, start + end
    return None, start + 1


FRAGMENTS = (
    "{", "}", "[", "]", "(", ")", ",", ":", " ", "\n", "\r", "\r\n", "'", '"', "'''", '"""', "\\", "#", "1", "0", "-",
    "+", ".", "j", "e", "x", "b", "r", "f", "u", "set", "()", "True", "None", "null", "true", '"answer"', "'answer'",
    '"more"', "'a'", "1.5", "2j", "0x1f", "...", "\t", "\x00", "\ud800", "é", "_", "NaN", "Infinity", "-Infinity",
    "\\u0041", "\\n", "\\N{BULLET}", "\\N{NOPE}", "\\x4", "\x0c", "\x0b", "{}", "[]", "{'a': ", '{"a": ', "1_0", "09",
    "1e5", "ｓｅｔ", "rb", "\\\n", "=", "*", "1j", "f'", "'x'", "b'x'", "b'é'", "\\'", '\\"',
)  # fmt: skip
ATOMS = (
    "1", "-1", "+2", "1.5", "2j", "-2j", "1+2j", "1 - 2J", "(1)", "-(1)", "(-1)+2j", "2j+1j", "'a'+1j", "1+2j+3j",
    "(1+2j)+1j", "-1j+1", "None+1j", "'a'", '"b"', "'a' 'b'", "b'x'", "b'x' b'y'", "b'x' 'y'", "b'\\xe9'", "b'é'",
    "r'\\''", "u'z'", "f'x'", "'\\N{BULLET}'", "'\\N{NOPE}'", "'\\x4'", "True", "None", "False", "...", "set()",
    "set ( )", "ｓｅｔ()", "()", "'''t'''", "0x_f", "1_000", "'answer'", "'more'", '"answer"', '"more"', "true", "null",
    "NaN", "-True", "1+2", "09", "00", "1e5j", "1" * 4_301, "[]", "{}",
)  # fmt: skip
SPACES = ("", " ", "\n", "  ", "\t", " # c\n", "\\\n", "\r\n", "\r")


def _container(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    items = st.lists(children, max_size=3)
    pairs = st.lists(st.tuples(children, st.sampled_from(SPACES), children), max_size=3)
    return st.one_of(
        st.tuples(st.sampled_from(SPACES), pairs, st.booleans()).map(
            lambda t: (
                "{"
                + t[0]
                + ", ".join(f"{k}:{s}{v}" for k, s, v in t[1])
                + ("," if t[2] and t[1] else "")
                + "}"
            )
        ),
        items.map(lambda xs: "[" + ", ".join(xs) + "]"),
        items.map(lambda xs: "{" + ", ".join(xs) + "}"),
        items.map(lambda xs: "(" + ", ".join(xs) + ("," if len(xs) == 1 else "") + ")"),
        children.map(lambda x: "(" + x + ")"),
    )


def _splice(base: str, edits: list[tuple[int, str]]) -> str:
    for position, fragment in edits:
        position %= len(base) + 1
        base = base[:position] + fragment + base[position:]
    return base


literals = st.recursive(st.sampled_from(ATOMS), _container, max_leaves=12)
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
    st.text(max_size=40),
    st.tuples(
        st.sampled_from(("", "x ", "{", "{{", "Answer: ")), st.lists(literals, min_size=1, max_size=3)
    ).map(lambda t: t[0] + " ".join(t[1])),
    st.tuples(
        st.lists(literals, min_size=1, max_size=3).map(" ".join),
        st.lists(st.tuples(st.integers(0, 400), st.sampled_from(FRAGMENTS)), max_size=2),
    ).map(lambda t: _splice(*t)),
)


def _shown(find: Callable[[str], Iterator[dict]], text: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # literal_eval warns about escapes like "\d"
        return [repr(o) for o in find(text)]  # repr: NaN is not equal to itself


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("{{'answer': 'more'}}")
@example("{'a': (1, [2])}")
@example("{(1, [2]): 3}")
@example("{'a': '''x}'''}")
@example("{'a': 1, # }\n 'answer': 'more'}")
@example('{"a": 1, "a": 2} {"answer": NaN}')
def test_objects_are_those_the_slow_rule_finds(text: str) -> None:
    assert _shown(objects, text) == _shown(slow_objects, text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("{0:F''}")
@example("{0:0-0}")
@example("{([]):0}")
@example("{(1, [2]): 3}")
@example("{'a': b'é'}")
@example("{'a': 1j+1j}")
def test_each_brace_is_decided_as_literal_eval_decides_it(text: str) -> None:
    """The scanner itself (before `literal_eval` confirms what it found) accepts exactly Python's dicts."""
    literals = PyLiterals(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in (i for i, c in enumerate(text) if c == "{"):
            value, end = slow_literal(text, start)
            assert literals.dict_end(start) == (end if value is not None else None), start


@pytest.mark.parametrize("levels", [MAX_LEVELS - 1, MAX_LEVELS, MAX_LEVELS + 1])
@pytest.mark.parametrize("opener", ["[", "(", "{'a': "])
def test_nesting_is_read_up_to_pythons_own_limit(levels: int, opener: str) -> None:
    closer = {"[": "]", "(": ")", "{": "}"}[opener[0]]
    text = "{'a': " + opener * (levels - 1) + "1" + closer * (levels - 1) + "}"
    value, end = slow_literal(text, 0)
    assert (value is not None) == (levels <= MAX_LEVELS)
    assert PyLiterals(text).dict_end(0) == (end if value is not None else None)


def test_json_is_read_to_any_depth_and_as_json_reads_it() -> None:
    text = '{"a": ' + "[" * 50_000 + '{"answer": "more"}' + "]" * 50_000 + ', "a": NaN, "b": -Infinity}'
    found = JsonObjects(text).at(0)
    assert found is not None and found[1] == len(text)
    assert list(found[0]) == ["a", "b"] and found[0]["a"] != found[0]["a"]  # the last "a" wins, and is NaN


WORST = {
    "brace run": "{" * 20_000 + '{"answer": "more"}',
    "bracket run": '{"a": ' + "[" * 20_000,
    "open objects": '{"a": ' * 4_000,
    "open literals": "{'a': " * 4_000,
    "quote runs": '{"' * 10_000 + "{'" * 10_000,
    "comments": "{#" * 5_000 + "\n" + "1, " * 5_000,
    "quadruple quotes": "{''''" * 2_000 + " 1, " * 2_000,
    "triple quotes": "{'''" * 2_000 + '{"""' * 2_000,
    "prose braces": "{'a': [1, (2, {3: \"x\"}), 'b'}, " * 1_000,
}


@pytest.mark.parametrize("text", list(WORST.values()), ids=list(WORST))
def test_each_character_is_read_a_bounded_number_of_times(text: str) -> None:
    json_objects, literals = JsonObjects(text), PyLiterals(text)
    for start in (i for i, c in enumerate(text) if c == "{"):
        json_objects.at(start)
        literals.dict_end(start)
    assert json_objects.read_chars <= 2 * len(text)  # a read inside a string of another never meets its objects
    assert literals.read_chars <= BUDGET_PER_CHAR * len(text)  # reads that meet share the rest: no cap needed
    json_objects, literals = JsonObjects(text), PyLiterals(text)
    list(found_by(json_objects, literals))
    assert literals.evaluated_chars <= len(text)  # literal_eval reads only what becomes an object
