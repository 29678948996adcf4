"""What --model accepts: the paper's six aliases, `symbolic`, `hf:<id or dir>` and litellm strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathcomp_tests.backends.models import ModelSpec, UnknownModelError, aliases, resolve

PAPER_MODELS = {
    "qwen2.5-3b": ("hf", "Qwen/Qwen2.5-3B-Instruct", "hf", "hf:Qwen/Qwen2.5-3B-Instruct"),
    "qwen2.5-7b": ("hf", "Qwen/Qwen2.5-7B-Instruct", "hf", "hf:Qwen/Qwen2.5-7B-Instruct"),
    "gpt-4o": ("api", "openai/gpt-4o-2024-08-06", "openai", "openai/gpt-4o-2024-08-06"),
    "gpt-4o-mini": ("api", "openai/gpt-4o-mini-2024-07-18", "openai", "openai/gpt-4o-mini-2024-07-18"),
    "claude-3.5-haiku": (
        "api",
        "anthropic/claude-3-5-haiku-20241022",
        "claude",
        "anthropic/claude-3-5-haiku-20241022",
    ),
    "claude-3.7-sonnet": (
        "api",
        "anthropic/claude-3-7-sonnet-20250219",
        "claude",
        "anthropic/claude-3-7-sonnet-20250219",
    ),
}


@pytest.mark.parametrize("alias", sorted(PAPER_MODELS))
def test_each_paper_model_alias_resolves_with_its_notebooks_prompt_set(alias: str) -> None:
    kind, name, prompt_set, resolved = PAPER_MODELS[alias]
    spec = resolve(alias)
    assert spec == ModelSpec(given=alias, kind=kind, name=name, prompt_set=prompt_set)
    assert spec.resolved == resolved
    assert spec.names == (alias, resolved)


def test_the_alias_table_holds_the_six_paper_models_and_the_embedded_one() -> None:
    assert sorted(aliases()) == sorted([*PAPER_MODELS, "mathcomp-tiny"])
    assert resolve("mathcomp-tiny").resolved == "hf:fixtures/models/mathcomp-tiny"


def test_symbolic_is_the_sympy_reference() -> None:
    spec = resolve("symbolic")
    assert (spec.kind, spec.name, spec.resolved, spec.names) == (
        "symbolic",
        "symbolic",
        "symbolic",
        ("symbolic",),
    )
    assert spec.prompt_set == "hf"


def test_hf_prefix_takes_a_hub_id_or_a_local_directory(tmp_path: Path) -> None:
    hub = resolve("hf:HuggingFaceTB/SmolLM2-135M-Instruct")
    assert (hub.kind, hub.name, hub.resolved) == (
        "hf",
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "hf:HuggingFaceTB/SmolLM2-135M-Instruct",
    )
    local = resolve(f"hf:{tmp_path}")
    assert (local.kind, local.name, local.prompt_set) == ("hf", str(tmp_path), "hf")


def test_a_litellm_string_goes_to_the_api_backend() -> None:
    spec = resolve("openai/gpt-4.1-nano")
    assert spec == ModelSpec("openai/gpt-4.1-nano", "api", "openai/gpt-4.1-nano", "hf")
    assert spec.names == ("openai/gpt-4.1-nano",)


@pytest.mark.parametrize("given", ["gpt4", "llama-3-8b", "hf:", "/models/qwen", "./qwen", ""])
def test_an_unknown_model_lists_every_alias(given: str) -> None:
    with pytest.raises(UnknownModelError) as info:
        resolve(given)
    message = str(info.value)
    assert f"unknown model {given!r}" in message
    assert "Known aliases: " + ", ".join(sorted([*PAPER_MODELS, "mathcomp-tiny"])) + "." in message
    assert "hf:<hub id or directory>" in message


def test_aliases_come_from_the_table_given(tmp_path: Path) -> None:
    table = tmp_path / "models.toml"
    table.write_text(
        '[aliases.tiny]\nmodel = "hf:sshleifer/tiny-gpt2"\nprompt_set = "paper"\n', encoding="utf-8"
    )
    assert resolve("tiny", table) == ModelSpec("tiny", "hf", "sshleifer/tiny-gpt2", "paper")
    with pytest.raises(UnknownModelError, match=r"Known aliases: tiny\."):
        resolve("gpt-4o", table)


def test_hosted_aliases_name_dated_snapshots() -> None:
    """A nightly run must not change model without notice: every hosted alias carries a date."""
    import re

    for name, entry in aliases().items():
        if not entry["model"].startswith("hf:"):
            assert re.search(r"\d{4}-?\d{2}-?\d{2}$", entry["model"]), name


def test_a_path_spelt_differently_is_one_canonical_model() -> None:
    a = resolve("hf:fixtures/models/mathcomp-tiny")
    b = resolve("hf:./fixtures/models/mathcomp-tiny")
    assert a.canonical == b.canonical and a.canonical.startswith("hf:/") and a.directory is not None
    assert a.names != b.names
