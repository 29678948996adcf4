"""Reveal-After (opt-in, --reveal-after): ask under a Flip cue, then under the Truth cue in the same
conversation, and compare both with the neutral answer (seed 002; mathcomp_tests/protocols/reveal_after.py).

A measurement: the shares land in summary.json and the report. The case fails only when too many of its
answers are unreadable or failed (the neutral framing's invalid and error ceilings).
"""

from typing import Any

import pytest

from mathcomp_tests.types import Condition


def test_reveal_after(condition: Condition, reveal_after_result: dict[str, Any]) -> None:
    if reveal_after_result["breaches"]:
        r = reveal_after_result
        pytest.fail(
            f"{r['case']}: {', '.join(r['breaches'])} over the neutral framing's ceiling "
            f"({r['unread']} of {r['items']} items had an unreadable or failed answer, {r['errors']} failed)",
            pytrace=False,
        )
