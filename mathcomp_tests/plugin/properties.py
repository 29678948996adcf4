"""What the suite's items carry as properties (pytest's ``user_properties``, which --junitxml writes as each
``<testcase>``'s ``<property>`` elements), each value written as JSON text, so that a CI tool can parse it;
the plugin reads them back the same way from every item's report (under xdist, from the workers').

pytest's ``record_property`` fixture warns on every item that uses it when junit_family is xunit2 (pytest's
default), whose schema has no properties on a testcase: the same warning once per case. The suite appends
to ``user_properties`` itself and says it once per run instead (``configure``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from ..finite import json_safe
from ..verdict import power

POWER_PROPERTY = "mathcomp_power"
"""The property of a case whose tests could not see a rise of detect_rise (verdict/power.py)."""
VALID_FAMILIES = ("xunit1", "legacy")
"""The junit_family values whose schema has properties on a testcase."""


def record(node: pytest.Item, name: str, value: object) -> None:
    """``value`` as the item's property ``name``: JSON text (a number nothing could compute as null)."""
    text = json.dumps(json_safe(value), ensure_ascii=False, allow_nan=False)
    node.user_properties.append((name, text))


def read(report: pytest.TestReport, name: str) -> Any | None:
    """The value of the property ``name`` on ``report`` (JSON text parsed), None when it has none."""
    for found, value in getattr(report, "user_properties", []):
        if found == name:
            return json.loads(value) if isinstance(value, str) else value
    return None


def record_power(node: pytest.Item, summary: Mapping[str, Any]) -> None:
    """An underpowered case says so in JUnit XML too: ``mathcomp_power`` with the case, its detect_rise, the
    labels no test of it could see a rise of that on, the smallest rise each label sees (null: cannot rise),
    and the same as one sentence (``text``)."""
    blind = power.blind(summary)
    if blind:
        value = {
            "case": summary["case"],
            "detect_rise": power.detect_rise(summary),
            "labels": blind,
            "seen": power.seen(summary),
            "text": power.case_text(summary),
        }
        record(node, POWER_PROPERTY, value)


def configure(config: pytest.Config) -> None:
    """One warning per run (on the controller) where --junitxml writes a family whose schema has no
    properties on a testcase: the suite's properties are written there all the same."""
    family = config.getini("junit_family")
    if (
        not getattr(config.option, "xmlpath", None)
        or family in VALID_FAMILIES
        or hasattr(config, "workerinput")
    ):
        return
    config.issue_config_time_warning(
        pytest.PytestWarning(
            f"--junitxml: each MathComp case's results are written as JSON <property> elements of its "
            f"<testcase>, which the junit_family={family} schema does not list; set junit_family=xunit1 "
            "for a file that validates with them"
        ),
        stacklevel=2,
    )
