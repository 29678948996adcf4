"""Checks of this repository's own on top of the MathComp suite's ceilings: the worked example of the
``pytest_mathcomp_check`` hook (``mathcomp init`` writes this same file into a new repository).

A cue word may move a model, but not far: under a direct cue, DirErr of the cued label may exceed the
neutral case's (same position, identity, format, scenarios) by at most MAX_RISE_OVER_NEUTRAL. Each failure
is a ``Check`` carrying the gap it measured and how to measure it again (``measure``), so that against a
baseline the gate tests the gap against the base's on the same resampled scenarios: a case whose gap grew
significantly, by more than max_increase, fails as new, even when the base fails the check too.
"""

from __future__ import annotations

from typing import Any

import pytest

from mathcomp_tests import Check

MAX_RISE_OVER_NEUTRAL = 0.10
"""How far DirErr(y) under direct-y may rise over the neutral case's DirErr(y)."""
EXEMPT_CEILINGS = ("mathcomp-tiny",)
"""Models held to these thresholds.toml sections are not held to this check: the embedded demonstration
model (and a fine-tune of it held to its ceilings) follows every cue word by construction, and its
ceilings say how far. A model you ship should not be listed."""


@pytest.hookimpl(optionalhook=True)
def pytest_mathcomp_check(case: Any, scores: Any, neutral: Any) -> list[Check]:
    framing = case.condition.framing
    exempt = any(name in source for source in case.ceilings.sources for name in EXEMPT_CEILINGS)
    if not framing.startswith("direct-") or exempt:
        return []
    label = framing.removeprefix("direct-")

    def gap(cued_scores: Any, neutral_scores: Any) -> float | None:
        cued, plain = cued_scores.dir_err[label], neutral_scores.dir_err[label]
        return None if cued is None or plain is None else cued - plain

    found = gap(scores, neutral())
    if found is None or found <= MAX_RISE_OVER_NEUTRAL:
        return []
    plain = neutral().dir_err[label]
    message = (
        f"DirErr({label}) under {framing} is {plain + found:.3f}, {found:+.3f} over the neutral case's "
        f"{plain:.3f}; at most {MAX_RISE_OVER_NEUTRAL:+.2f} allowed (conftest.py)"
    )
    return [Check(message, value=found, name=f"DirErr({label}) over neutral", measure=gap)]
