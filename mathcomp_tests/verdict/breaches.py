"""A failing case's breaches as summary.json names them (``case["breaches"]``): a metric over its ceiling
(its name, ``DirErr(less)``), a rise over the baseline (its test's name and RISE, ``DirErr(less) rise``), or
one of the user's own checks (anything else). For every reader of a verdict: the report's verdict box and
the CI job summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scoring.changes import test_name
from ..scoring.metrics import CASE_METRICS

Case = Mapping[str, Any]
CEILING_NAMES = {m.name: m for m in CASE_METRICS}
"""A ceiling's breach (the metric's name) -> the metric."""
RISE = " rise"
"""What follows a test's name in the breach of a rise."""


def kinds(case: Case) -> tuple[list[str], list[str], list[str]]:
    """A failing case's breaches split three ways: ceilings (metric names), rises (test names:
    ``DirErr(less)``, ``soft DirErr(less)``, ``toward-cue rate(less)``), own checks."""
    ceilings, rises, own = [], [], []
    for breach in case.get("breaches") or []:
        text = str(breach)
        if text in CEILING_NAMES:
            ceilings.append(text)
        elif text.endswith(RISE) and test_name(text[: -len(RISE)]):
            rises.append(text[: -len(RISE)])
        else:
            own.append(text)
    return ceilings, rises, own
