"""Cue invariance (``--invariance``): does the same item's answer move when the cue is added?

One case per cue condition: its answers and its neutral partner's (same scenarios, position, identity,
format and every other field of the condition) are compared pair by pair (flip rate, toward-cue rate,
LDS, LAO, on all pairs and on the Truth / Flip halves; cue echo and drift under the chain-of-thought
formats) and held to the [invariance] ceilings of thresholds.toml. One case per neutral condition holds
its EDR and ND to theirs. Both framings' answers come from the cache when test_framing asked them.
"""

from collections.abc import Callable

import pytest

from mathcomp_tests.config.invariance_ceilings import Ceilings
from mathcomp_tests.plugin import properties
from mathcomp_tests.scoring import cue_pairs
from mathcomp_tests.types import NEUTRAL, Condition
from mathcomp_tests.verdict.result import CaseResult

PROPERTY = "mathcomp-invariance"


def test_cue_invariance(
    condition: Condition,
    mathcomp_case: Callable[[Condition], CaseResult],
    mathcomp_invariance_ceilings: Callable[[str], Ceilings],
    request: pytest.FixtureRequest,
) -> None:
    partner = cue_pairs.neutral_partner(condition)
    neutral, cued = (cue_pairs.from_items(mathcomp_case(c).items) for c in (partner, condition))
    ceilings = mathcomp_invariance_ceilings(condition.framing)
    summary = cue_pairs.compare(neutral, cued, condition, ceilings, drift=bool(ceilings.get("drift")))
    properties.record(request.node, PROPERTY, summary)
    if summary["breaches"]:
        pytest.fail(cue_pairs.explanation(summary), pytrace=False)


def test_neutral_balance(
    condition: Condition,
    mathcomp_case: Callable[[Condition], CaseResult],
    mathcomp_invariance_ceilings: Callable[[str], Ceilings],
    request: pytest.FixtureRequest,
) -> None:
    assert condition.framing == NEUTRAL
    ceilings = mathcomp_invariance_ceilings(NEUTRAL)
    summary = cue_pairs.neutral_summary(
        cue_pairs.from_items(mathcomp_case(condition).items), condition, ceilings
    )
    properties.record(request.node, PROPERTY, summary)
    if summary["breaches"]:
        pytest.fail(cue_pairs.explanation(summary), pytrace=False)
