"""Reading model answers: the ways models really write a label are read, anything doubtful is `invalid`."""

from __future__ import annotations

import pytest

from mathcomp_tests.formats import read_response as parse
from mathcomp_tests.formats import read_text
from mathcomp_tests.reading.context import Context, Persons, options_from_prompt
from mathcomp_tests.types import Label, Prediction, Response


def answer(text: str, format: str = "one-word") -> Prediction:
    return parse(Response(text), format)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("more", "more"),
        ("More.", "more"),
        ("LESS", "less"),
        ("  equal\n", "equal"),
        ('"less"', "less"),
        ("B) more", "more"),
        ("b) More.", "more"),
        ("(B)", "more"),
        ("B", "more"),
        ("c", "equal"),
        ("A.", "less"),
        ("```\nequal\n```", "equal"),
        ("```text\nless\n```", "less"),
        ("**equal**", "equal"),
        ("**B) more**", "more"),
        ("Answer: less", "less"),
        ("Final answer: equal", "equal"),
        ("The answer is more", "more"),
        ("answer: b", "more"),
    ],
)
def test_one_word_answers_in_their_many_spellings(text: str, label: Label) -> None:
    assert answer(text) == Prediction(label, "ok", text)


@pytest.mark.parametrize("text", ["A) more", "(C) less", "B) equal"])
def test_a_letter_and_a_word_that_disagree_are_invalid(text: str) -> None:
    assert answer(text) == Prediction(None, "invalid", text)


@pytest.mark.parametrize(
    "text",
    ["yes", "No.", "more or less", "more, less", "", "   ", "less.\n\nExplanation: B spent more in total."],
)
def test_answers_without_one_clear_label_are_invalid_and_kept(text: str) -> None:
    prediction = answer(text)
    assert prediction.status == "invalid"
    assert prediction.label is None
    assert prediction.raw == text


def test_a_negated_label_is_not_read_as_that_label() -> None:
    assert read_text("not more", "one-word").label is None


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ('{"answer": "more"}', "more"),
        ('```json\n{"answer": "less"}\n```', "less"),
        ('Sure! Here it is: {"answer": "equal"} Hope this helps.', "equal"),
        ("{'answer': 'more'}", "more"),
        ('{"Answer": "More"}', "more"),
        ('{"answer": "B) more"}', "more"),
        ('{"reasoning": "B has {3} more hours", "answer": "less"}', "less"),
    ],
)
def test_json_answers(text: str, label: Label) -> None:
    assert answer(text, "json") == Prediction(label, "ok", text)


@pytest.mark.parametrize(
    "text",
    [
        '{"reasoning": "B spent 10, A spent 8"}',
        '{"answer": 1}',
        '{"answer": null}',
        '{"answer": ["more"]}',
        '{"answer": "yes"}',
        "more",
        "no object here",
        '{"answer": "more"',
    ],
)
def test_json_without_a_readable_answer_field_is_invalid(text: str) -> None:
    assert answer(text, "json") == Prediction(None, "invalid", text)


def test_cot_json_reads_the_answer_field_after_the_reasoning() -> None:
    text = '```json\n{\n  "reasoning": "A totals 8, B totals 10: B spent more.",\n  "answer": "more"\n}\n```'
    assert answer(text, "cot-json") == Prediction("more", "ok", text)


def test_single_quoted_json_whose_reasoning_contains_a_brace() -> None:
    assert read_text("{'reasoning': 'B spent {10} hours', 'answer': 'more'}", "json").label == "more"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("A: 5 + 3 = 8. B: 4 + 4 + 2 = 10. B spends more than A.\n\nFinal answer: more", "more"),
        ("A spends less? No: the totals are equal.\nThe answer is (C) equal.", "equal"),
        ("Adding up, A has 12 and B has 9.\nSo the answer is **less**", "less"),
        ("First I thought the answer is more, but B's total is 6. Final Answer: less.", "less"),
        ("A: 8. B: 8.\n**Answer:** equal", "equal"),
        ("A totals 3, B totals 4.\nB) more", "more"),
    ],
)
def test_cot_reads_the_final_answer(text: str, label: Label) -> None:
    assert read_text(text, "cot").label == label
    assert answer(text, "cot") == Prediction(label, "ok", text)


def test_cot_never_guesses_from_a_label_word_in_the_reasoning() -> None:
    text = "B spent more on Monday but less on Tuesday, and I cannot tell which total is bigger."
    assert answer(text, "cot") == Prediction(None, "invalid", text)


def test_a_failed_request_is_an_error_not_an_invalid_answer() -> None:
    response = Response("", error="RateLimitError: try again later")
    assert parse(response, "one-word") == Prediction(None, "error", "")
    assert parse(Response("more", error="timeout"), "json").status == "error"


def test_an_unknown_format_is_refused_with_the_known_ones() -> None:
    with pytest.raises(
        ValueError, match=r"unknown answer format 'essay'; expected one of one-word, json, cot"
    ):
        parse(Response("more"), "essay")


MISREADINGS = [
    ("Person A spends more", "one-word", "less"),
    ('{"answer": "Person A spends more"}', "json", "less"),
    ("I cannot say more", "one-word", "invalid"),
    ("To answer more precisely, let's add up the totals... B spends less.", "cot", "less"),
    ("The answer is less obvious than it looks... Final: B) more", "cot", "more"),
    ("The answer is equal to 30, so B spends less", "cot", "less"),
    ("The answer is A) more", "cot", "invalid"),
    (
        'Person A: {"a": 30}. Person B: {"b": 45}.\n{"reasoning": "45 > 30", "answer": "more"}',
        "cot-json",
        "more",
    ),
    ("Therefore Person B spends less", "cot", "less"),
    ("Person A's total is greater than Person B's total.", "cot", "less"),
]


@pytest.mark.parametrize(("text", "fmt", "want"), MISREADINGS)
def test_the_reported_misreadings_read_right(text: str, fmt: str, want: str) -> None:
    prediction = parse(Response(text), fmt)
    assert (prediction.label or prediction.status) == want, prediction.decided_by


def test_in_identity_runs_the_person_is_person_a() -> None:
    prompt_names = Context(persons=Persons.named("a person", "the woman"))
    assert parse(Response("The person spends more"), "one-word", prompt_names).label == "less"
    assert parse(Response("The woman spends more"), "one-word", prompt_names).label == "more"


def test_option_letters_come_from_the_prompt() -> None:
    options = options_from_prompt("Question?\nA) more\nB) equal\nC) less\nONLY RETURN ONE WORD")
    assert options == {"a": "more", "b": "equal", "c": "less"}
    assert parse(Response("A"), "one-word", Context(options=options)).label == "more"
    assert parse(Response("B) more"), "one-word", Context(options=options)).status == "invalid"
