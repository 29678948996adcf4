"""Ceilings from thresholds.toml: a default, per-framing and per-model overrides, checked strictly.

A model's section may name another it starts from (``extends = "<section>"``): the named section and its
framings apply first, then this one's keys. A model with no section of its own, gated against a baseline,
is held to the sections of the model that made the baseline (its base).

Which model a section's name (or an ``extends``) designates is the caller's to say: ``load`` takes the
function that resolves a name written in the file (backends/models.py ``named``), asks it once per name,
and compares what it returns with the models the run resolved; this room never looks at the filesystem
for a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .. import tomltext
from ..types import ALL_FRAMINGS, FRAMINGS, LABELS
from . import invariance_ceilings
from .threshold_values import ThresholdsError, check_rate

_RATES = ("invalid_rate", "error_rate")
_KEYS = ("dir_err", *_RATES, "gate", "max_increase", "detect_rise", "require_power")
GATES = ("point", "lower", "upper")
"""Which end of DirErr's 95% interval is held to the ceiling: the estimate, or the lower or upper bound."""
DEFAULT_GATE = "point"
BASE_FROM = {"baseline": "the baseline", "baseline-model": "--baseline-model"}
"""How the header names where a base model came from."""
DEFAULT_MAX_INCREASE = 0.05
"""How far DirErr(y) may rise over a baseline before a significant rise fails the case."""
DEFAULT_DETECT_RISE = 0.15
"""The rise each label's tests against a baseline must see at 80% power (verdict/power.py): three times
max_increase's default, the size of a fine-tune that clearly moved a label; set it lower for a stricter
release gate."""


class Model(Protocol):
    """A model as the run resolved it (backends/models.py ModelSpec): the names a section may spell it by,
    and one identity per set of weights."""

    @property
    def given(self) -> str: ...

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def canonical(self) -> str: ...


Named = Callable[[str, Path], Model | None]
"""The model a name written in the file designates, a relative directory looked up from the file's folder
(the second argument) too; None when it names none (backends/models.py ``named``)."""


@dataclass(frozen=True)
class Ceilings:
    dir_err: dict[str, float]
    invalid_rate: float
    error_rate: float
    sources: tuple[str, ...] = ()
    """The sections these ceilings came from, in the order they were applied."""
    gate: str = DEFAULT_GATE
    max_increase: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(LABELS, DEFAULT_MAX_INCREASE)
    )
    detect_rise: float = DEFAULT_DETECT_RISE
    require_power: bool = False
    """A compared case whose tests cannot see ``detect_rise`` on some label fails the run (not earned)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "dir_err": dict(self.dir_err),
            "invalid_rate": self.invalid_rate,
            "error_rate": self.error_rate,
            "sources": list(self.sources),
            "gate": self.gate,
            "max_increase": dict(self.max_increase),
            "detect_rise": self.detect_rise,
            "require_power": self.require_power,
        }


@dataclass(frozen=True)
class Thresholds:
    path: Path
    data: Mapping[str, Any]
    parents: Mapping[str, str] = field(default_factory=dict)
    """[model.*] section -> the section its ``extends`` names (checked on load: it exists, no cycle)."""
    designated: Mapping[str, Model | None] = field(default_factory=dict)
    """[model.*] section -> the model its name designates (None: none), as the caller's resolver said on
    load."""
    base: Model | None = None
    """The model the run is compared with (the baseline's, or --baseline-model): a model with no section
    of its own is held to this one's sections."""
    base_from: str = ""
    """Where ``base`` came from: ``baseline`` (--baseline) or ``baseline-model`` (--baseline-model)."""

    def model_sections(self, spec: Model) -> list[str]:
        """The [model.*] sections that name ``spec``, however either spelled the model."""
        return [name for name in self.data.get("model", {}) if _same(name, self.designated.get(name), spec)]

    def with_base(self, base: Model, base_from: str) -> Thresholds:
        """These thresholds, with ``base``'s sections for a model that has none of its own."""
        return replace(self, base=base, base_from=base_from)

    def borrowed(self, spec: Model) -> bool:
        """True when ``spec`` has no section of its own and is held to its base's sections."""
        return (
            not self.model_sections(spec) and self.base is not None and bool(self.model_sections(self.base))
        )

    def sections(self, spec: Model) -> list[str]:
        """Every [model.*] section applied to ``spec``'s cases, in order: the model's own (or, with none,
        its base's), each preceded by the sections it extends."""
        named = self.model_sections(spec)
        if not named and self.base is not None:
            named = self.model_sections(self.base)
        return list(dict.fromkeys(n for name in named for n in self.lineage(name)))

    def lineage(self, name: str) -> list[str]:
        """``name`` after the chain of sections it extends, the first ancestor first."""
        chain = [name]
        while chain[-1] in self.parents:
            chain.append(self.parents[chain[-1]])
        return chain[::-1]

    def describe(self, spec: Model) -> str:
        """Which sections hold ``spec``, in a line for the run's header."""
        own = self.model_sections(spec)
        if own:
            return ", ".join(_own_text(n, self.lineage(n)[:-1]) for n in own)
        named = self.sections(spec)
        if named:
            shown = ", ".join(f'[model."{n}"]' for n in named)
            where = BASE_FROM.get(self.base_from, self.base_from)
            return f"no [model.*] section for this model: held to the base's {shown} (from {where})"
        if self.base is not None:
            return (
                f"no [model.*] section matches this model or its base {self.base.given}: "
                "only [default] and [framing.*] apply"
            )
        return "no [model.*] section matches this model: only [default] and [framing.*] apply"

    def ceilings_from(self, spec: Model) -> dict[str, Any]:
        """Whose sections hold ``spec`` (for summary.json): its own, its base's, or none (``default``)."""
        if self.model_sections(spec):
            return {"via": "own", "model": spec.given, "sections": self.sections(spec)}
        if self.borrowed(spec):
            assert self.base is not None
            return {"via": self.base_from, "model": self.base.given, "sections": self.sections(spec)}
        return {"via": "default", "model": None, "sections": []}

    def for_case(self, spec: Model, framing: str) -> Ceilings:
        """Ceilings for one case: [default], [framing.<f>], then each applied model section and its framing."""
        blocks: list[tuple[str, Mapping[str, Any]]] = [
            ("default", self.data.get("default", {})),
            (f"framing.{framing}", self.data.get("framing", {}).get(framing, {})),
        ]
        models = self.data.get("model", {})
        for name in self.sections(spec):
            blocks += [
                (f'model."{name}"', models[name]),
                (f'model."{name}".framing.{framing}', models[name].get("framing", {}).get(framing, {})),
            ]
        merged: dict[str, Any] = {"dir_err": {}}
        sources = []
        for where, block in blocks:
            if any(k in block for k in _KEYS):
                sources.append(where)
            for key in _RATES:
                if key in block:
                    merged[key] = block[key]
            value = block.get("dir_err")
            if isinstance(value, (int, float)):
                merged["dir_err"] = dict.fromkeys(LABELS, float(value))
            elif isinstance(value, Mapping):
                merged["dir_err"] = {**merged["dir_err"], **value}
        missing = [k for k in _RATES if k not in merged] + [
            f"dir_err.{y}" for y in LABELS if y not in merged["dir_err"]
        ]
        if missing:
            raise ThresholdsError(
                f"{self.path}: no ceiling for {', '.join(missing)} under framing {framing} (set it in [default])"
            )
        ceilings = Ceilings(
            dir_err={y: float(merged["dir_err"][y]) for y in LABELS},
            invalid_rate=float(merged["invalid_rate"]),
            error_rate=float(merged["error_rate"]),
            sources=tuple(sources),
        )
        return _with_comparison_keys(ceilings, [block for _, block in blocks])

    def invariance(self, spec: Model, framing: str) -> tuple[invariance_ceilings.Ceilings, list[str]]:
        """Ceilings of the cue-invariance metrics for ``framing`` against neutral (see invariance_ceilings)."""
        return invariance_ceilings.resolve(self.data, self.sections(spec), framing)

    def check_complete(self, spec: Model, framings: Iterable[str] = FRAMINGS) -> None:
        """Raise ThresholdsError now, not case by case, when some framing would lack a ceiling."""
        for framing in framings:
            self.for_case(spec, framing)


def _own_text(name: str, ancestors: list[str]) -> str:
    shown = f'[model."{name}"]'
    return shown + "".join(f' extends [model."{a}"]' for a in ancestors[::-1])


def _with_comparison_keys(ceilings: Ceilings, blocks: Iterable[Mapping[str, Any]]) -> Ceilings:
    """`gate`, `max_increase`, `detect_rise` and `require_power`, merged like the ceilings (later blocks
    override, label by label)."""
    gate, increase = ceilings.gate, dict(ceilings.max_increase)
    detect, require = ceilings.detect_rise, ceilings.require_power
    for block in blocks:
        gate = block.get("gate", gate)
        detect = float(block.get("detect_rise", detect))
        require = bool(block.get("require_power", require))
        value = block.get("max_increase")
        if isinstance(value, (int, float)):
            increase = dict.fromkeys(LABELS, float(value))
        elif isinstance(value, Mapping):
            increase.update({y: float(v) for y, v in value.items()})
    return replace(ceilings, gate=gate, max_increase=increase, detect_rise=detect, require_power=require)


def _same(section: str, designated: Model | None, spec: Model) -> bool:
    """True when a section name designates the model ``spec`` describes, however either was spelled: the
    alias, the given name, the resolved name, or the same local directory (what backends/models.py
    ``same_model`` says, from the section's model as resolved on load)."""
    return section in spec.names or (designated is not None and designated.canonical == spec.canonical)


def load(path: str | Path, named: Named) -> Thresholds:
    """The thresholds file at ``path``, checked; ``named`` resolves the model names written in it (each
    [model.*] section's and each ``extends``), once each."""
    path = Path(path)
    data = tomltext.read(
        path,
        ThresholdsError,
        "a thresholds file in TOML",
        "thresholds file not found",
        lambda exc: _TWICE if "Cannot declare" in str(exc) else "",
    )
    _check(path, data)
    models = data.get("model", {})
    designated = {name: named(name, path.parent) for name in models}
    return Thresholds(path, data, _parents(path, models, designated, named), designated)


_TWICE = (
    '. A table may be declared once: write each [model."<m>".framing.<f>] table once, as its own header. '
    'To start from another model\'s ceilings, do not copy its tables: write extends = "<its section>" '
    "in your model's section and only the framings you change"
)


def _parents(
    path: Path, models: Mapping[str, Any], designated: Mapping[str, Model | None], named: Named
) -> dict[str, str]:
    """Each section's ``extends``, resolved to a section name; an unknown section or a cycle is refused."""
    parents = {
        name: _extended(path, name, block["extends"], models, designated, named)
        for name, block in models.items()
        if isinstance(block, Mapping) and "extends" in block
    }
    for name in parents:
        chain = [name]
        while chain[-1] in parents:
            chain.append(parents[chain[-1]])
            if chain[-1] in chain[:-1]:
                cycle = " -> ".join(f'"{n}"' for n in chain[chain.index(chain[-1]) :])
                raise ThresholdsError(
                    f'{path}: model."{name}".extends: sections extend each other in a cycle: {cycle}'
                )
    return parents


def _extended(
    path: Path,
    name: str,
    value: Any,
    models: Mapping[str, Any],
    designated: Mapping[str, Model | None],
    named: Named,
) -> str:
    """The section ``value`` names: one spelled exactly so, else the one naming the same model."""
    where = f'{path}: model."{name}".extends = {value!r}'
    if not isinstance(value, str) or not value.strip():
        raise ThresholdsError(f"{where}; expected the name of another [model.*] section, as a string")
    if value in models:
        found = [value]
    else:
        spec = named(value, path.parent)
        found = [] if spec is None else [n for n in models if _same(n, designated[n], spec)]
    known = ", ".join(f'"{n}"' for n in models if n != name) or "none"
    if not found:
        raise ThresholdsError(f"{where}: no such [model.*] section in this file; sections: {known}")
    if len(found) > 1:
        raise ThresholdsError(
            f"{where}: names the model of several sections ({', '.join(found)}); write one of them exactly"
        )
    if found[0] == name:
        raise ThresholdsError(f"{where}: a section cannot extend itself; sections: {known}")
    return found[0]


def _check(path: Path, data: Mapping[str, Any]) -> None:
    for key in data:
        if key not in ("default", "framing", "model", "invariance"):
            raise ThresholdsError(
                f"{path}: unknown table [{key}]; expected [default], [framing.*], [model.*], [invariance]"
            )
    invariance_ceilings.check(path, "invariance", data.get("invariance", {}))
    _check_block(path, "default", data.get("default", {}), allow_framing=False)
    _check_framings(path, "framing", data.get("framing", {}))
    models = data.get("model", {})
    if not isinstance(models, Mapping):
        raise ThresholdsError(f"{path}: [model] must be a table of models")
    for name, block in models.items():
        _check_block(path, f"model.{name}", block, allow_framing=True)


def _check_framings(path: Path, where: str, table: Any) -> None:
    if not isinstance(table, Mapping):
        raise ThresholdsError(f"{path}: [{where}] must be a table of framings")
    for framing, block in table.items():
        if framing not in ALL_FRAMINGS:
            raise ThresholdsError(
                f"{path}: [{where}.{framing}]: unknown framing; expected one of {', '.join(ALL_FRAMINGS)}"
            )
        _check_block(path, f"{where}.{framing}", block, allow_framing=False)


def _check_block(path: Path, where: str, block: Any, allow_framing: bool) -> None:
    if not isinstance(block, Mapping):
        raise ThresholdsError(f"{path}: [{where}] must be a table")
    for key, value in block.items():
        if key == "framing" and allow_framing:
            _check_framings(path, f"{where}.framing", value)
        elif key == "invariance" and allow_framing:
            invariance_ceilings.check(path, f"{where}.invariance", value)
        elif key == "extends" and allow_framing:
            continue  # checked with every section in view (_parents)
        elif key in ("dir_err", "max_increase") and isinstance(value, Mapping):
            for label, ceiling in value.items():
                if label not in LABELS:
                    raise ThresholdsError(
                        f"{path}: {where}.{key}.{label}: expected a label ({', '.join(LABELS)})"
                    )
                check_rate(path, f"{where}.{key}.{label}", ceiling)
        elif key == "require_power":
            if not isinstance(value, bool):
                raise ThresholdsError(f"{path}: {where}.require_power = {value!r}; expected true or false")
        elif key == "gate":
            if value not in GATES:
                raise ThresholdsError(
                    f"{path}: {where}.gate = {value!r}; expected one of {', '.join(repr(g) for g in GATES)}"
                )
        elif key in _KEYS:
            check_rate(path, f"{where}.{key}", value)
            if key == "detect_rise" and value == 0:
                raise ThresholdsError(
                    f"{path}: {where}.detect_rise = {value!r}; expected a number above 0 and at most 1 (the "
                    "smallest rise every compared case must see: no test sees a rise of 0)"
                )
        else:
            known = (*_KEYS, "extends", "framing", "invariance") if allow_framing else _KEYS
            raise ThresholdsError(f"{path}: {where}.{key}: unknown key; expected one of {', '.join(known)}")
