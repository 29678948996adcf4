"""What the power check says, and to whom: the underpowered cases worst first (a label that cannot rise
before one that needs a large rise), the cases that made a run NOT EARNED named (a framing's own
require_power), --require-power with nothing to compare said, and a detect_rise of 0 refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.plugin.finish import power_note
from mathcomp_tests.scoring import thresholds
from mathcomp_tests.verdict import power


def _case(case_id: str, mde: float | None, required: bool = False) -> dict[str, object]:
    change = {"difference": 0.0, "power": {"mde": mde, "text": "..."}}
    return {
        "case": case_id,
        "ceilings": {"detect_rise": 0.15, "require_power": required},
        "baseline": {"status": "compared", "changes": {"less": change}},
    }


def test_the_case_that_cannot_rise_comes_first_not_the_first_in_order() -> None:
    block = power.summary([_case("neutral", 0.26), _case("direct-less", None), _case("direct-more", 0.40)])
    assert block is not None
    assert [c["case"] for c in block["underpowered"]] == ["direct-less", "direct-more", "neutral"]
    note = power_note(block)
    assert note is not None and "e.g. direct-less: less (cannot rise)" in note


def test_a_framings_own_require_power_names_its_case() -> None:
    block = power.summary([_case("neutral", None), _case("direct-less", 0.30, required=True)])
    assert block is not None and block["not_earned"] and block["not_earned_by"] == ["direct-less"]
    note = power_note(block)
    assert note is not None and "e.g. direct-less: less (sees +30.0)" in note
    assert "power required of 1 of them: direct-less" in note


def test_require_power_without_a_baseline_says_it_had_nothing_to_check(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=6", "--framings=neutral", "--require-power")
    assert run.returncode == 0, run.output[-2000:]
    assert "--require-power had nothing to check: no case was compared with a baseline" in run.output


@pytest.mark.parametrize("value", ["0", "0.0"])
def test_a_detect_rise_of_zero_is_refused_with_its_key(tmp_path: Path, value: str) -> None:
    path = tmp_path / "thresholds.toml"
    path.write_text(f"[default]\ndir_err = 0.5\n[framing.direct-less]\ndetect_rise = {value}\n")
    refused = r"framing.direct-less.detect_rise = 0(\.0)?; expected a number above 0"
    with pytest.raises(thresholds.ThresholdsError, match=refused):
        thresholds.load(path)
