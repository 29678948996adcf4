"""Ceilings resolve default -> framing -> model -> model.framing, and a bad thresholds file names its key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mathcomp_tests.backends.models import resolve
from mathcomp_tests.scoring.thresholds import Ceilings, ThresholdsError, load

ROOT = Path(__file__).resolve().parents[1]

LAYERED = """
[default]
dir_err = 0.20
invalid_rate = 0.10
error_rate = 0.02

[framing.indirect-more]
dir_err = { more = 0.30 }
invalid_rate = 0.15

[model."qwen2.5-3b"]
dir_err = { less = 0.25 }
error_rate = 0.05

[model."qwen2.5-3b".framing.indirect-more]
dir_err = { equal = 0.40 }

[model."openai/gpt-4o-2024-08-06"]
dir_err = 0.05
"""


def thresholds_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "thresholds.toml"
    path.write_text(text, encoding="utf-8")
    return path


def ceilings(tmp_path: Path, model: str, framing: str, text: str = LAYERED) -> Ceilings:
    found = load(thresholds_file(tmp_path, text)).for_case(resolve(model), framing)
    return replace(found, sources=())


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ThresholdsError) as info:
        load(thresholds_file(tmp_path, text))
    message = str(info.value)
    assert str(tmp_path / "thresholds.toml") in message
    return message


def test_the_default_applies_to_any_model_and_neutral_framing(tmp_path: Path) -> None:
    assert ceilings(tmp_path, "openai/some-model", "neutral") == Ceilings(
        {"less": 0.2, "more": 0.2, "equal": 0.2}, invalid_rate=0.10, error_rate=0.02
    )


def test_a_framing_raises_only_its_own_label(tmp_path: Path) -> None:
    assert ceilings(tmp_path, "openai/some-model", "indirect-more") == Ceilings(
        {"less": 0.2, "more": 0.3, "equal": 0.2}, invalid_rate=0.15, error_rate=0.02
    )


def test_a_model_override_merges_label_by_label(tmp_path: Path) -> None:
    assert ceilings(tmp_path, "qwen2.5-3b", "neutral") == Ceilings(
        {"less": 0.25, "more": 0.2, "equal": 0.2}, invalid_rate=0.10, error_rate=0.05
    )


def test_model_framing_comes_last_and_all_four_layers_merge(tmp_path: Path) -> None:
    assert ceilings(tmp_path, "qwen2.5-3b", "indirect-more") == Ceilings(
        {"less": 0.25, "more": 0.3, "equal": 0.4}, invalid_rate=0.15, error_rate=0.05
    )


def test_a_model_is_matched_by_its_resolved_name(tmp_path: Path) -> None:
    # the table names "openai/gpt-4o-2024-08-06"; the user typed the alias "gpt-4o"
    found = ceilings(tmp_path, "gpt-4o", "indirect-more")
    assert found.dir_err == {"less": 0.05, "more": 0.05, "equal": 0.05}
    assert found.invalid_rate == 0.15


def test_a_model_is_matched_by_its_alias_but_not_its_neighbours(tmp_path: Path) -> None:
    assert ceilings(tmp_path, "qwen2.5-3b", "neutral").error_rate == 0.05
    assert ceilings(tmp_path, "qwen2.5-7b", "neutral").error_rate == 0.02


def test_the_projects_thresholds_give_symbolic_zero_tolerance() -> None:
    project = load(ROOT / "thresholds.toml")
    assert project.for_case(resolve("symbolic"), "indirect-less") == Ceilings(
        {"less": 0.0, "more": 0.0, "equal": 0.0},
        invalid_rate=0.0,
        error_rate=0.0,
        sources=("default", "framing.indirect-less", 'model."symbolic"'),
    )
    assert project.for_case(resolve("gpt-4o-mini"), "indirect-less").dir_err["less"] == 0.3


def test_a_ceiling_with_no_default_names_what_is_missing(tmp_path: Path) -> None:
    text = "[default]\ndir_err = { more = 0.2 }\ninvalid_rate = 0.1\n"
    with pytest.raises(ThresholdsError, match=r"no ceiling for error_rate, dir_err\.less, dir_err\.equal"):
        ceilings(tmp_path, "symbolic", "neutral", text)


def test_an_unknown_table_is_named(tmp_path: Path) -> None:
    assert "unknown table [models]" in refusal(tmp_path, '[models."gpt-4o"]\ndir_err = 0.1\n')


def test_an_unknown_key_is_named_with_where_it_is(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[framing.neutral]\ndirerr = 0.1\n")
    assert "framing.neutral.direrr: unknown key" in message
    assert "dir_err, invalid_rate, error_rate" in message


def test_an_unknown_framing_is_named(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[framing.indirect_more]\ndir_err = 0.3\n")
    assert "[framing.indirect_more]: unknown framing" in message
    assert "indirect-more" in message


def test_an_unknown_framing_under_a_model_is_named(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[model."gpt-4o".framing.sneaky]\ndir_err = 0.3\n')
    assert "[model.gpt-4o.framing.sneaky]: unknown framing" in message


def test_an_unknown_label_is_named(tmp_path: Path) -> None:
    message = refusal(tmp_path, "[default]\ndir_err = { larger = 0.3 }\n")
    assert "default.dir_err.larger: expected a label (less, more, equal)" in message


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ("invalid_rate = 1.5", "default.invalid_rate = 1.5"),
        ("error_rate = -0.01", "default.error_rate = -0.01"),
        ("dir_err = { more = 2 }", "default.dir_err.more = 2"),
        ('dir_err = "0.2"', "default.dir_err = '0.2'"),
        ("error_rate = true", "default.error_rate = True"),
    ],
)
def test_a_value_outside_zero_to_one_is_refused(tmp_path: Path, line: str, where: str) -> None:
    message = refusal(tmp_path, f"[default]\n{line}\n")
    assert f"{where}; expected a number between 0 and 1" in message


def test_bad_toml_is_a_thresholds_error(tmp_path: Path) -> None:
    assert "not valid TOML" in refusal(tmp_path, "[default\ndir_err = 0.2\n")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ThresholdsError, match=r"nowhere\.toml: thresholds file not found"):
        load(tmp_path / "nowhere.toml")


def test_a_framing_that_is_not_a_table_is_named(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[model."gpt-4o"]\nframing = 0.3\n')
    assert "model.gpt-4o.framing" in message


def test_a_local_model_section_matches_every_spelling_of_its_directory(tmp_path: Path) -> None:
    """Sections name a directory relative to the thresholds file, the working directory or the project."""
    (tmp_path / "finetune").mkdir()
    text = '[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\n[model."hf:./finetune"]\ndir_err = 0.4\n'
    path = thresholds_file(tmp_path, text)
    for spelling in (f"hf:{tmp_path}/finetune", f"hf:{tmp_path}/./finetune/", f"hf:{tmp_path}/finetune/../finetune"):
        found = load(path).for_case(resolve(spelling), "neutral")
        assert found.dir_err["more"] == 0.4, spelling
        assert found.sources == ("default", 'model."hf:./finetune"')
    assert load(path).for_case(resolve("hf:./elsewhere"), "neutral").dir_err["more"] == 0.2
