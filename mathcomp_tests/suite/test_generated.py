"""The same case on fresh scenarios: ``--generated N`` per condition, seeded by ``--hypothesis-seed``.

A model can be tuned on a fixed set; scenarios it has never seen, balanced by construction (see
data/shortcuts.py), check that its framing ceilings hold beyond the bundled 300. With a baseline, each
case is compared with the baseline's ``generated:<id>`` case on the same scenarios.
"""

import pytest

from mathcomp_tests.types import Condition
from mathcomp_tests.verdict.explain import explanation
from mathcomp_tests.verdict.result import CaseResult


def test_generated(condition: Condition, generated_result: CaseResult) -> None:
    if not generated_result.passed:
        pytest.fail(explanation(generated_result), pytrace=False)
