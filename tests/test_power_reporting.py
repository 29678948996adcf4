"""What the power check says, and to whom: the underpowered cases worst first (a label that cannot rise
before one that needs a large rise), the cases that made a run NOT EARNED named (a framing's own
require_power), --require-power with nothing to compare said, and a detect_rise of 0 refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.backends.models import named
from mathcomp_tests.config import thresholds
from mathcomp_tests.plugin.finish import power_note
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
        thresholds.load(path, named)


def test_a_test_that_cannot_rise_because_items_left_the_label_says_so() -> None:
    from mathcomp_tests.scoring.power import RisePower

    left = RisePower(pairs=24, base_hits=19, away=19, level=0.05, max_increase=0.05, needed=None, mde=None)
    assert left.text("less") == (
        "cannot rise: 19 of its 24 items left less (the base answered less, this run does not): no significant "
        "rise can outweigh them"
    )
    few = RisePower(pairs=3, base_hits=0, away=0, level=0.05, max_increase=0.05, needed=None, mde=None)
    assert few.text("less") == "cannot rise: 3 items are too few for a significant rise at level 0.05"


def test_a_soft_rise_counts_the_items_whose_probability_went_up() -> None:
    from mathcomp_tests.scoring import paired, soft_paired

    golds = {str(i): "more" for i in range(24)}
    base = {s: {"less": 0.2, "more": 0.7, "equal": 0.1} for s in golds}
    cand = {s: ({"less": 0.9, "more": 0.05, "equal": 0.05} if int(s) < 5 else p) for s, p in base.items()}
    soft = soft_paired.soft_changes(golds, cand, base, dict.fromkeys(("less", "more", "equal"), 0.01), 0.05)
    assert soft["less"].breach and soft["less"].rose == 5
    text = "\n".join(paired.explanation(paired.Comparison("base", "mcnemar", 0.05, {}, soft=soft), "case"))
    assert "soft DirErr(less) rose: the probability of less went up on 5 of 24 items" in text
