"""Explanation drift embeds each rationale once per process: a cue case's three halves and the run's
summary read the embeddings back instead of sending the same texts through the sentence encoder again."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.scoring import cue_pairs, rationale


def _answers(records: list[dict[str, Any]]) -> dict[str, cue_pairs.Answers]:
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_case[r["case"]].append(r)
    return {case: cue_pairs.from_records(rows) for case, rows in by_case.items()}


def test_a_cue_case_sends_its_rationales_to_the_encoder_once_and_a_second_look_sends_none(
    tmp_path: Path,
) -> None:
    """The demo model's chain-of-thought answers under neutral and direct-more, compared as
    test_cue_invariance and the run's summary compare them (drift on all pairs and both halves)."""
    run = run_suite(
        tmp_path, "--formats=cot", "--limit=60", "--framings=neutral,direct-more", "--positions=begin"
    )
    assert run.returncode in (0, 1), run.output
    answers = _answers(run.records)
    neutral, cued = answers["neutral-begin-std-cot"], answers["direct-more-begin-std-cot"]
    condition = cue_pairs.condition_of(
        next(r for r in run.records if r["case"] == "direct-more-begin-std-cot")
    )
    rationale.encoder.cache_clear()
    try:
        encode = rationale.encoder()
    except rationale.EmbeddingUnavailable as exc:
        pytest.fail(f"the embedding model is part of the dev install: {exc}")
    first = cue_pairs.compare(neutral, cued, condition, drift=True, reps=20)
    assert first["all"]["drift_n"] > 0 and not first["notes"], first
    assert encode.calls == 1, "every rationale of the case in one call of the encoder"
    again = cue_pairs.compare(neutral, cued, condition, drift=True, reps=20)
    assert encode.calls == 1, "the same texts again: read back, not encoded again"
    for half in ("all", "truth", "flip"):
        assert again[half]["drift"] == first[half]["drift"]
    uncached = rationale.drift(
        neutral.raw, cued.raw, neutral.labels, cued.labels, "cot", encode.encode, reps=20
    )
    assert uncached["drift"]["value"] == pytest.approx(first["all"]["drift"]["value"], abs=1e-6)
