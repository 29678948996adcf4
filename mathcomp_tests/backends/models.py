"""Resolve what the user passed to --model into a backend kind, a model name and a canonical identity."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from ..paths import fixtures, shipped
from ..printable import printable
from .prepared import PREPARED, complete, directory, missing

DEFAULT_PROMPT_SET = "hf"


class UnknownModelError(ValueError):
    """--model names no alias and no backend form; the message lists what is known."""

    def __init__(self, message: str, given: str = ""):
        super().__init__(message)
        self.given = given
        """The name that did not resolve (stripped), so a caller can say which option gave it."""


@dataclass(frozen=True)
class ModelSpec:
    given: str
    """What the user typed (an alias, or the spec itself)."""
    kind: str
    """`symbolic`, `hf`, `vllm` or `api`."""
    name: str
    """The hub id or directory (hf, vllm), the litellm model string (api), or `symbolic`."""
    prompt_set: str
    directory: Path | None = None
    """hf, vllm: the local model directory, resolved to an absolute path, when there is one."""

    @property
    def resolved(self) -> str:
        return {"hf": f"hf:{self.name}", "vllm": f"vllm:{self.name}", "api": self.name}.get(
            self.kind, self.name
        )

    @property
    def canonical(self) -> str:
        """One spelling per set of weights: a local directory by its absolute path, anything else as
        resolved; the same weights served by vLLM are the same model as under hf (same ceilings)."""
        if self.directory is not None:
            return f"hf:{self.directory}"
        return f"hf:{self.name}" if self.kind == "vllm" else self.resolved

    @property
    def names(self) -> tuple[str, ...]:
        """Names a threshold section may use for this model: alias, given, resolved and canonical forms."""
        return tuple(dict.fromkeys((self.given, self.resolved, self.canonical)))


def aliases(path: Path | None = None) -> dict[str, dict[str, str]]:
    path = path or fixtures() / "models.toml"
    with open(path, "rb") as fh:
        return dict(tomllib.load(fh).get("aliases", {}))


def looks_like_path(name: str) -> bool:
    """A directory rather than a hub id: `./x`, `/x`, `~/x`, `a/b/c`, or anything with a backslash.

    A hub id is `name` or `owner/name`; more slashes, or a leading dot or slash, can only be a path.
    """
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name


def local_directory(name: str, bases: tuple[Path, ...] = ()) -> Path | None:
    """The absolute directory ``name`` names, looked up from the working directory, then ``bases``,
    then where this package ships it (so the embedded default, ``fixtures/models/...``, loads from
    anywhere, installed or in a checkout)."""
    for candidate in _candidates(name, bases):
        if candidate.is_dir():
            return candidate.resolve()
    return None


def local_file(name: str, bases: tuple[Path, ...] = ()) -> Path | None:
    """The file ``name`` names where local_directory looks (a file given where a model folder belongs)."""
    for candidate in _candidates(name, bases):
        if candidate.is_file():
            return candidate.resolve()
    return None


def _candidates(name: str, bases: tuple[Path, ...]) -> tuple[Path, ...]:
    path = Path(name).expanduser()
    return (path,) if path.is_absolute() else (path, *(b / path for b in bases), shipped(path))


def resolve(
    given: str,
    path: Path | None = None,
    bases: tuple[Path, ...] = (),
    config: Path | None = None,
) -> ModelSpec:
    """The backend kind and name for ``given``; an hf directory is located (relative to ``bases`` too).

    A model group of the --model-config ``config`` is an api model whatever it looks like: a Router
    group is any name the config gives its deployments.
    """
    from .router import group_names

    table = aliases(path)
    groups = group_names(config) if config is not None else ()
    given = given.strip()
    spec, prompt_set = given, DEFAULT_PROMPT_SET
    if spec in groups:
        return ModelSpec(given, "api", spec, prompt_set)
    kind, bare = ("vllm", spec[5:]) if spec.startswith("vllm:") else ("hf", spec)
    if bare in PREPARED:  # a model the project prepares under the user's cache (`mathcomp prepare smollm2`)
        folder = directory(PREPARED[bare])
        if not complete(folder):
            raise UnknownModelError(missing(PREPARED[bare]), given)
        return ModelSpec(given, kind, str(folder), prompt_set, folder)
    if spec in table:
        spec, prompt_set = table[spec]["model"], table[spec].get("prompt_set", DEFAULT_PROMPT_SET)
    if spec == "symbolic":
        return ModelSpec(given, "symbolic", "symbolic", prompt_set)
    if spec.startswith("hf:") and len(spec) > 3:
        name = spec[3:]
        return ModelSpec(given, "hf", name, prompt_set, local_directory(name, bases))
    if spec.startswith("vllm:") and len(spec) > 5:
        name = spec[5:]
        return ModelSpec(given, "vllm", name, prompt_set, local_directory(name, bases))
    if "/" in spec and not spec.startswith(("/", ".", "~")):
        return ModelSpec(given, "api", spec, prompt_set)
    known = ", ".join(sorted(table))
    known += "".join(f". Prepared by `{m.command}`: {m.alias}" for m in PREPARED.values())
    hint = f" A local directory is written hf:{spec}." if spec and local_directory(spec, bases) else ""
    hint = hint if spec else " The name is empty."
    in_config = f" --model-config {config} has the groups {', '.join(groups)}." if config is not None else ""
    raise UnknownModelError(
        f"unknown model {given!r}.{hint}{in_config} Known aliases: {known}. Or give `symbolic`, "
        "`hf:<hub id or directory>` (a local transformers model), `vllm:<hub id or directory>` (served by "
        "vLLM), or a litellm model string such as `openai/<name>`.",
        given,
    )


def recorded(name: str, folder: Path) -> ModelSpec | None:
    """The model a file recorded (a baseline's ``model``), as it is given there; a relative directory is
    looked up from the file's ``folder`` first. None when the name no longer resolves (an alias since
    removed)."""
    given = name
    if name.startswith("hf:") and not Path(name[3:]).is_absolute() and (folder / name[3:]).is_dir():
        name = f"hf:{(folder / name[3:]).resolve()}"
    try:
        return replace(resolve(name, bases=(folder,)), given=given)
    except UnknownModelError:
        return None


def named(name: str, folder: Path) -> ModelSpec | None:
    """The model a name written in a file designates (a thresholds.toml [model.*] section, its
    ``extends``), a relative directory looked up from the file's ``folder`` too; None when it names none."""
    try:
        return resolve(name, bases=(folder,))
    except (UnknownModelError, OSError):
        return None


def same_model(section: str, spec: ModelSpec, bases: tuple[Path, ...] = ()) -> bool:
    """True when a thresholds section name designates the model ``spec`` describes, however either was
    spelled: the alias, the given name, the resolved name, or the same local directory."""
    if section in spec.names:
        return True
    try:
        other = resolve(section, bases=bases)
    except (UnknownModelError, OSError):
        return False
    return other.canonical == spec.canonical


SERVED = ("api", "vllm")
"""The model kinds --api-base applies to: a litellm model (an OpenAI-compatible server) and vllm:."""


def check_api_base(api_base: str | None, models: dict[str, ModelSpec | None]) -> None:
    """--api-base is an http(s) URL, and some model of the run (by option: --model, --judge-model,
    --baseline-model) is one it applies to; otherwise it would be ignored without a word."""
    if api_base is None:
        return
    from urllib.parse import urlsplit

    from ..settings import SelectionError

    shown = printable(api_base)
    try:
        url = urlsplit(api_base)
        port_ok = url.port is None or url.port > 0
    except ValueError:
        url, port_ok = None, False
    spaced = any(ch.isspace() or not ch.isprintable() for ch in api_base)
    if url is None or spaced or url.scheme not in ("http", "https") or not url.hostname or not port_ok:
        raise SelectionError(
            f"--api-base={shown}: not a server URL; expected http(s)://host[:port][/path], "
            "e.g. http://localhost:8000/v1"
        )
    given = {option: spec for option, spec in models.items() if spec is not None}
    if not any(spec.kind in SERVED for spec in given.values()):
        named = ", ".join(f"{option}={printable(spec.given)} ({spec.kind})" for option, spec in given.items())
        raise SelectionError(
            f"--api-base={shown} applies only to an API model (openai/<name>) or a vllm: model, and this run "
            f"has none ({named}); "
            "drop --api-base, or give a model it serves, e.g. --model=openai/<name>"
        )
