"""The same case on fresh scenarios: ``--generated N`` per condition, seeded by ``--hypothesis-seed``.

A model can be tuned on a fixed set; scenarios it has never seen, balanced by construction (see
data/shortcuts.py), check that its framing ceilings hold beyond the bundled 300.
"""

from mathcomp_tests.types import Condition
from mathcomp_tests.verdict.explain import explanation
from mathcomp_tests.verdict.result import CaseResult


def test_generated(condition: Condition, generated_result: CaseResult) -> None:
    assert generated_result.passed, explanation(generated_result)
