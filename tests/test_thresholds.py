"""Ceilings resolve default -> framing -> model -> model.framing, and a bad thresholds file names its key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mathcomp_tests.backends.models import ModelSpec, named, resolve
from mathcomp_tests.config.thresholds import Ceilings, ThresholdsError, load

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
    found = load(thresholds_file(tmp_path, text), named).for_case(resolve(model), framing)
    return replace(found, sources=())


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(ThresholdsError) as info:
        load(thresholds_file(tmp_path, text), named)
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
    project = load(ROOT / "thresholds.toml", named)
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
        load(tmp_path / "nowhere.toml", named)


def test_a_framing_that_is_not_a_table_is_named(tmp_path: Path) -> None:
    message = refusal(tmp_path, '[model."gpt-4o"]\nframing = 0.3\n')
    assert "model.gpt-4o.framing" in message


def test_a_local_model_section_matches_every_spelling_of_its_directory(tmp_path: Path) -> None:
    """Sections name a directory relative to the thresholds file, the working directory or the project."""
    (tmp_path / "finetune").mkdir()
    text = '[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\n[model."hf:./finetune"]\ndir_err = 0.4\n'
    path = thresholds_file(tmp_path, text)
    for spelling in (f"hf:{tmp_path}/finetune", f"hf:{tmp_path}/./finetune/", f"hf:{tmp_path}/finetune/../finetune"):
        found = load(path, named).for_case(resolve(spelling), "neutral")
        assert found.dir_err["more"] == 0.4, spelling
        assert found.sources == ("default", 'model."hf:./finetune"')
    assert load(path, named).for_case(resolve("hf:./elsewhere"), "neutral").dir_err["more"] == 0.2


# A fine-tune and its base: `extends`, and the base's sections for a model with none of its own.

DEMO = "hf:fixtures/models/mathcomp-tiny"
FINETUNE = f"""
[default]
dir_err = 0.20
invalid_rate = 0.10
error_rate = 0.02

[model."{DEMO}"]
dir_err = {{ less = 0.35, more = 0.20, equal = 0.90 }}
invalid_rate = 0.05

[model."{DEMO}".framing.direct-less]
dir_err = {{ less = 1.0 }}

[model."{DEMO}".framing.direct-more]
dir_err = {{ more = 1.0 }}

[model."{DEMO}".invariance.framing.placebo-more]
flip_rate = 1.0

[model."hf:./my-finetune"]
extends = "{DEMO}"

[model."hf:./my-finetune".framing.direct-less]
dir_err = {{ less = 0.9 }}
"""


def test_a_section_that_extends_its_base_gets_every_ceiling_and_overrides_one_framing(tmp_path: Path) -> None:
    (tmp_path / "my-finetune").mkdir()
    thresholds = load(thresholds_file(tmp_path, FINETUNE), named)
    finetune, demo = resolve(f"hf:{tmp_path}/my-finetune"), resolve(DEMO)
    for framing in ("neutral", "direct-more", "indirect-less"):
        assert replace(thresholds.for_case(finetune, framing), sources=()) == replace(
            thresholds.for_case(demo, framing), sources=()
        ), framing
    overridden = thresholds.for_case(finetune, "direct-less")
    assert overridden.dir_err == {"less": 0.9, "more": 0.2, "equal": 0.9}
    assert overridden.invalid_rate == 0.05
    assert overridden.sources == (
        "default",
        f'model."{DEMO}"',
        f'model."{DEMO}".framing.direct-less',
        'model."hf:./my-finetune".framing.direct-less',
    )
    assert thresholds.invariance(finetune, "placebo-more")[0]["flip_rate"] == {"all": 1.0}
    assert thresholds.sections(finetune) == [DEMO, "hf:./my-finetune"]
    assert thresholds.describe(finetune) == f'[model."hf:./my-finetune"] extends [model."{DEMO}"]'
    assert thresholds.ceilings_from(finetune)["via"] == "own"


def test_extends_may_name_the_base_by_another_spelling_of_its_model(tmp_path: Path) -> None:
    text = FINETUNE.replace(f'extends = "{DEMO}"', 'extends = "mathcomp-tiny"')
    thresholds = load(thresholds_file(tmp_path, text), named)
    assert thresholds.parents == {"hf:./my-finetune": DEMO}


@pytest.mark.parametrize(
    ("extends", "message"),
    [
        (
            '"hf:./nowhere"',
            r'model\."hf:\./my-finetune"\.extends = \'hf:\./nowhere\': no such \[model\.\*\] section in this '
            r'file; sections: "hf:fixtures/models/mathcomp-tiny"',
        ),
        ('"hf:./my-finetune"', "a section cannot extend itself"),
        ("0.3", r"extends = 0\.3; expected the name of another \[model\.\*\] section, as a string"),
    ],
)
def test_a_bad_extends_names_the_section_and_what_exists(tmp_path: Path, extends: str, message: str) -> None:
    text = FINETUNE.replace(f'extends = "{DEMO}"', f"extends = {extends}")
    with pytest.raises(ThresholdsError, match=message):
        load(thresholds_file(tmp_path, text), named)


def test_sections_that_extend_each_other_are_a_cycle_named_in_order(tmp_path: Path) -> None:
    text = FINETUNE + f'\n[model."{DEMO}".framing.neutral]\ndir_err = 0.3\n'
    text = text.replace(f'[model."{DEMO}"]\n', f'[model."{DEMO}"]\nextends = "hf:./my-finetune"\n', 1)
    message = refusal(tmp_path, text)
    assert "sections extend each other in a cycle" in message
    assert f'"{DEMO}" -> "hf:./my-finetune" -> "{DEMO}"' in message


def test_extends_belongs_to_a_model_section_only(tmp_path: Path) -> None:
    message = refusal(tmp_path, FINETUNE + f'\n[model."{DEMO}".framing.neutral]\nextends = "x"\n')
    assert "framing.neutral.extends: unknown key" in message


def test_declaring_a_framing_table_twice_says_to_extend_instead_of_copying(tmp_path: Path) -> None:
    twice = FINETUNE + '\n[model."hf:./my-finetune".framing.direct-less]\ndir_err = { more = 0.5 }\n'
    message = refusal(tmp_path, twice)
    assert "Cannot declare" in message and 'write extends = "<its section>"' in message


def test_a_model_without_a_section_is_held_to_its_bases_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "copy").mkdir()
    (tmp_path / "my-finetune").mkdir()
    thresholds = load(thresholds_file(tmp_path, FINETUNE), named)
    copy, demo = resolve(f"hf:{tmp_path}/copy"), resolve(DEMO)
    assert thresholds.for_case(copy, "direct-more").dir_err["more"] == 0.2  # only [default] without a base
    held = thresholds.with_base(demo, "baseline")
    assert held.for_case(copy, "direct-more") == thresholds.for_case(demo, "direct-more")
    assert held.describe(copy) == (
        f'no [model.*] section for this model: held to the base\'s [model."{DEMO}"] (from the baseline)'
    )
    assert held.ceilings_from(copy) == {"via": "baseline", "model": DEMO, "sections": [DEMO]}
    # A model with a section of its own keeps it; a base with none leaves the defaults, and says so.
    assert held.sections(resolve(f"hf:{tmp_path}/my-finetune")) == [DEMO, "hf:./my-finetune"]
    other = thresholds.with_base(resolve("symbolic"), "baseline-model")
    assert other.for_case(copy, "direct-more").dir_err["more"] == 0.2
    assert other.describe(copy).startswith("no [model.*] section matches this model or its base symbolic")
    assert other.ceilings_from(copy)["via"] == "default"


def test_the_caller_resolves_each_section_name_once_and_the_file_is_matched_by_what_it_said(tmp_path: Path) -> None:
    """config/ looks at no filesystem for a model: ``load`` asks the caller's resolver once per [model.*]
    name (relative to the file's folder), and a section matches by the model the resolver named."""
    asked: list[tuple[str, Path]] = []

    def resolver(name: str, folder: Path) -> ModelSpec | None:
        asked.append((name, folder))
        return resolve("symbolic") if name == "my-reference" else None

    text = (
        '[default]\ndir_err = 0.2\ninvalid_rate = 0.1\nerror_rate = 0.0\n'
        '[model."my-reference"]\ndir_err = 0.4\n[model."elsewhere"]\ndir_err = 0.3\n'
    )
    thresholds = load(thresholds_file(tmp_path, text), resolver)
    assert sorted(asked) == [("elsewhere", tmp_path), ("my-reference", tmp_path)]
    found = thresholds.for_case(resolve("symbolic"), "neutral")
    assert found.dir_err["more"] == 0.4 and found.sources == ("default", 'model."my-reference"')
    assert thresholds.for_case(resolve("openai/some-model"), "neutral").dir_err["more"] == 0.2
    assert len(asked) == 2, "matching a model asks the resolver nothing more"
