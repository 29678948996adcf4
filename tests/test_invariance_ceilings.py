"""The [invariance] tables of thresholds.toml: resolution, validation and breaches."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathcomp_tests.backends.models import named, resolve
from mathcomp_tests.config import thresholds
from mathcomp_tests.config.thresholds import ThresholdsError
from mathcomp_tests.scoring.cue_pairs import breaches
from mathcomp_tests.scoring.invariance import cue_metrics, neutral_metrics

BASE = """
[default]
dir_err = 0.2
invalid_rate = 0.1
error_rate = 0.02

[invariance]
flip_rate = 0.3
nd = 0.4

[invariance.framing.placebo-less]
flip_rate = { all = 0.1, flip = 0.05 }
lao = 0.5

[model."gpt-4o".invariance.framing.placebo-less]
flip_rate = 0.2
edr_min = 0.6
"""


def load(tmp_path: Path, text: str) -> thresholds.Thresholds:
    path = tmp_path / "thresholds.toml"
    path.write_text(text)
    return thresholds.load(path, named)


def test_later_sections_override_metric_by_metric_and_half_by_half(tmp_path: Path) -> None:
    t = load(tmp_path, BASE)
    assert t.invariance(resolve("symbolic"), "direct-less") == (
        {"flip_rate": {"all": 0.3}, "nd": {"all": 0.4}},
        ["invariance"],
    )
    ceilings, sources = t.invariance(resolve("gpt-4o"), "placebo-less")
    assert ceilings == {
        "flip_rate": {"all": 0.2, "flip": 0.05},
        "nd": {"all": 0.4},
        "lao": {"all": 0.5},
        "edr_min": {"all": 0.6},
    }
    assert sources == [
        "invariance",
        "invariance.framing.placebo-less",
        'model."gpt-4o".invariance.framing.placebo-less',
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[invariance]\nflips = 0.1\n", "invariance.flips: unknown key"),
        ("[invariance]\nflip_rate = 1.5\n", "invariance.flip_rate = 1.5; expected a number between 0 and 1"),
        (
            "[invariance]\nflip_rate = { both = 0.1 }\n",
            "invariance.flip_rate.both: expected one of all, truth, flip",
        ),
        ("[invariance.framing.placebo]\nflip_rate = 0.1\n", "[invariance.framing.placebo]: unknown framing"),
        ('[model."x".invariance]\nlds = "low"\n', "model.x.invariance.lds = 'low'"),
    ],
)
def test_bad_invariance_tables_are_refused_naming_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ThresholdsError) as err:
        load(tmp_path, BASE.split("[invariance]")[0] + text)
    assert message in str(err.value) and str(tmp_path / "thresholds.toml") in str(err.value)


def test_breaches_name_the_metric_the_half_and_the_numbers() -> None:
    gold = {"s1": "more", "s2": "less", "s3": "more", "s4": "less"}
    cued = {"s1": "less", "s2": "less", "s3": "more", "s4": "less"}
    m = cue_metrics(gold, cued, gold, "less", reps=100)  # one flip of four, on the Flip half (1 of 2)
    found = breaches(m, {"flip_rate": {"all": 0.25, "flip": 0.4}, "lds": {"all": 0.3}})
    assert len(found) == 1 and found[0].startswith("flip rate on the Flip half 0.500 (95% CI")
    assert found[0].endswith("above its ceiling 0.400")
    assert breaches(m, {"flip_rate": {"all": 0.2}}) == [
        f"flip rate 0.250 (95% CI {m['all']['flip_rate']['interval'][0]:.3f}-"
        f"{m['all']['flip_rate']['interval'][1]:.3f}) above its ceiling 0.200"
    ]
    neutral = neutral_metrics({"e": "more", "m": "more"}, {"e": "equal", "m": "more"}, reps=10)
    assert breaches(neutral, {"edr_min": {"all": 0.5}, "nd": {"all": 1.0}})[0].startswith("EDR 0.000")
    assert breaches(cue_metrics({}, {}, {}, "less", reps=0), {"flip_rate": {"all": 0.0}}) == []  # no pairs


def test_the_shipped_file_gates_placebo_framings_and_the_reference(tmp_path: Path) -> None:
    shipped = thresholds.load(Path(__file__).resolve().parents[1] / "thresholds.toml", named)
    assert shipped.invariance(resolve("symbolic"), "indirect-less")[0]["flip_rate"] == {"all": 0.0}
    assert "flip_rate" in shipped.invariance(resolve("openai/gpt-4o"), "placebo-equal")[0]
