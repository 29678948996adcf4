"""Directional framing bias: one case per framing x position x identity x format.

DirErr(y) is, among items whose gold label is not y, the share answered y. Each case asserts that it
stays under the ceilings in thresholds.toml, and that unreadable answers and failed requests stay rare.
"""

import pytest

from mathcomp_tests.types import Condition
from mathcomp_tests.verdict.explain import explanation
from mathcomp_tests.verdict.result import CaseResult


def test_framing(condition: Condition, framing_result: CaseResult) -> None:
    if not framing_result.passed:
        pytest.fail(explanation(framing_result), pytrace=False)
