"""Which conditions each of the suite's tests is parametrised with under the run's options: what
pytest_generate_tests asks for, and the whole the selection is measured against (plugin/narrowing.py)."""

from __future__ import annotations

from dataclasses import replace

from ..settings import Settings, conditions
from ..types import NEUTRAL, PLAIN, Condition
from ..verdict.narrowing import GATED

GATED_TESTS = tuple(GATED)
"""The tests whose cases hold DirErr to its ceilings and to the baseline."""
INVARIANCE_TESTS = ("test_cue_invariance", "test_neutral_balance")
SUITE_TESTS = (*GATED_TESTS, "test_metamorphic", *INVARIANCE_TESTS, "test_reveal_after")


def enabled(name: str, s: Settings) -> bool:
    """Whether the options turn test ``name`` on (test_generated is off under --generated=0)."""
    return {
        "test_generated": s.generated > 0,
        "test_metamorphic": s.metamorphic,
        "test_cue_invariance": s.invariance,
        "test_neutral_balance": s.invariance,
        "test_reveal_after": s.reveal_after,
    }.get(name, True)


def for_test(name: str, s: Settings) -> list[Condition]:
    """The conditions test ``name`` runs under (empty when the options leave it nothing to run)."""
    if not enabled(name, s):
        return []
    selected = conditions(s)
    if name == "test_reveal_after":  # one neutral plain condition per position x identity x format x order
        return list(dict.fromkeys(replace(c, framing=NEUTRAL, protocol=PLAIN) for c in selected))
    if name == "test_metamorphic":  # pairs with neutral/std: cue or identity only, plain prompts
        return [c for c in selected if (c.framing != NEUTRAL or c.identity != "std") and c.protocol == PLAIN]
    if name in INVARIANCE_TESTS:  # cue cases against neutral; neutral cases for EDR / ND (plain prompts)
        wanted = name == "test_neutral_balance"
        return [c for c in selected if (c.framing == NEUTRAL) == wanted and c.protocol == PLAIN]
    return selected


def whole(s: Settings) -> list[tuple[str, str]]:
    """(test, condition id) of every item the options select, before pytest narrows it."""
    return [(name, c.id) for name in SUITE_TESTS for c in for_test(name, s)]
