"""Resolve what the user passed to --model into a backend kind and a model name."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..paths import fixtures

DEFAULT_PROMPT_SET = "hf"


class UnknownModelError(ValueError):
    """--model names no alias and no backend form; the message lists what is known."""


@dataclass(frozen=True)
class ModelSpec:
    given: str
    """What the user typed (an alias, or the spec itself)."""
    kind: str
    """`symbolic`, `hf` or `api`."""
    name: str
    """The hub id or directory (hf), the litellm model string (api), or `symbolic`."""
    prompt_set: str

    @property
    def resolved(self) -> str:
        return {"hf": f"hf:{self.name}", "api": self.name}.get(self.kind, self.name)

    @property
    def names(self) -> tuple[str, ...]:
        """Names a threshold override may use for this model."""
        return tuple(dict.fromkeys((self.given, self.resolved)))


def aliases(path: Path | None = None) -> dict[str, dict[str, str]]:
    path = path or fixtures() / "models.toml"
    with open(path, "rb") as fh:
        return dict(tomllib.load(fh).get("aliases", {}))


def resolve(given: str, path: Path | None = None) -> ModelSpec:
    table = aliases(path)
    given = given.strip()
    spec, prompt_set = given, DEFAULT_PROMPT_SET
    if spec in table:
        spec, prompt_set = table[spec]["model"], table[spec].get("prompt_set", DEFAULT_PROMPT_SET)
    if spec == "symbolic":
        return ModelSpec(given, "symbolic", "symbolic", prompt_set)
    if spec.startswith("hf:") and len(spec) > 3:
        return ModelSpec(given, "hf", spec[3:], prompt_set)
    if "/" in spec and not spec.startswith(("/", ".")):
        return ModelSpec(given, "api", spec, prompt_set)
    known = ", ".join(sorted(table))
    raise UnknownModelError(
        f"unknown model {given!r}. Known aliases: {known}. Or give `symbolic`, `hf:<hub id or directory>` "
        "(a local transformers model), or a litellm model string such as `openai/<name>`."
    )
