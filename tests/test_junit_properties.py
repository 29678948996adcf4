"""JUnit XML (--junitxml): every property the suite writes on a testcase is JSON text a CI tool can parse,
and the xunit2 schema's lack of testcase properties is said once per run, not once per case."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from helpers.suite_runner import run_suite

ARGS = ("--model=symbolic", "--limit=10", "--framings=neutral,direct-more", "--positions=begin")
SCHEMA_WARNING = "each MathComp case's results are written as JSON <property> elements"


def _strict(constant: str) -> Any:
    raise AssertionError(f"{constant} is not JSON")


def _properties(junit: Path) -> list[tuple[str, str, Any]]:
    """(testcase, property, its value parsed as strict JSON) for every property in the file."""
    root = ET.parse(junit).getroot()
    return [
        (
            str(case.get("name")),
            str(prop.get("name")),
            json.loads(str(prop.get("value")), parse_constant=_strict),
        )
        for case in root.iter("testcase")
        for prop in case.iter("property")
    ]


def _warnings(output: str) -> int:
    """The warnings pytest's closing line counts (0 when it counts none)."""
    found = re.search(r"(\d+) warnings?\b", output.strip().splitlines()[-1])
    return int(found.group(1)) if found else 0


def test_every_property_is_json_and_the_schema_warning_comes_once_per_run(tmp_path: Path) -> None:
    """Under xdist, with test_generated's, the cue-invariance and Reveal-After cases: each kind of property,
    one warning."""
    junit = tmp_path / "junit.xml"
    run = run_suite(
        tmp_path,
        *ARGS,
        "--generated=4",
        "--invariance",
        "--reveal-after",
        f"--junitxml={junit}",
        "-n",
        "2",
        generated=True,
    )
    assert run.returncode == 0, run.output
    found = _properties(junit)
    kinds = {"mathcomp", "mathcomp-generated", "mathcomp-invariance", "mathcomp-reveal-after"}
    assert {name for _, name, _ in found} == kinds
    cases = {value["case"]: value for _, name, value in found if name == "mathcomp"}
    summary = run.summary
    assert set(cases) == {c["case"] for c in summary["cases"]}
    for case in summary["cases"]:
        assert cases[case["case"]]["scores"] == case["scores"], "the property holds what summary.json holds"
    generated = [value["case"] for _, name, value in found if name == "mathcomp-generated"]
    assert sorted(generated) == sorted(c["case"] for c in summary["generated_cases"])
    reveal = [value for _, name, value in found if name == "mathcomp-reveal-after"]
    assert reveal == summary["reveal_after"]
    assert _warnings(run.output) == 1, run.output
    assert run.output.count(SCHEMA_WARNING) == 1 and "record_property is incompatible" not in run.output


def test_under_xunit1_the_properties_are_the_same_and_nothing_is_warned(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    run = run_suite(tmp_path, *ARGS, f"--junitxml={junit}", "-o", "junit_family=xunit1")
    assert run.returncode == 0, run.output
    assert [name for _, name, _ in _properties(junit)] == ["mathcomp", "mathcomp"]
    assert _warnings(run.output) == 0 and SCHEMA_WARNING not in run.output, run.output
