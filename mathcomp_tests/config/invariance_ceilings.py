"""Ceilings for the cue-invariance metrics: the [invariance] tables of thresholds.toml.

Resolved like DirErr's, later blocks overriding earlier ones metric by metric:
  [invariance] -> [invariance.framing.<f>] -> [model."<m>".invariance] -> [model."<m>".invariance.framing.<f>]
A paired metric's ceiling is one number (held to all pairs) or a table by half, e.g.
``flip_rate = { all = 0.2, flip = 0.3 }``. Under the neutral framing, ``nd`` is a ceiling and ``edr_min``
a floor. A metric with no ceiling is reported, never gated; a metric with no value (no usable pairs)
cannot breach (scoring/cue_pairs.py ``breaches`` holds a case's metrics to them).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..types import ALL_FRAMINGS
from .threshold_values import ThresholdsError, check_rate

PAIRED_KEYS = ("flip_rate", "toward_cue_rate", "lds", "lao", "cue_echo", "drift")
NEUTRAL_KEYS = ("nd", "edr_min")
HALVES = ("all", "truth", "flip")

Ceilings = dict[str, dict[str, float]]
"""metric -> half (all, truth, flip) -> ceiling; the neutral metrics use the half ``all``."""


def check(path: Path, where: str, block: Any) -> None:
    """Refuse unknown keys and values outside [0, 1], naming the file and the key."""
    if not isinstance(block, Mapping):
        raise _error(path, f"[{where}] must be a table")
    for key, value in block.items():
        if key == "framing" and where.endswith("invariance"):
            if not isinstance(value, Mapping):
                raise _error(path, f"[{where}.framing] must be a table of framings")
            for framing, inner in value.items():
                if framing not in ALL_FRAMINGS:
                    raise _error(
                        path,
                        f"[{where}.framing.{framing}]: unknown framing; expected one of {', '.join(ALL_FRAMINGS)}",
                    )
                check(path, f"{where}.framing.{framing}", inner)
        elif key in PAIRED_KEYS and isinstance(value, Mapping):
            for half, ceiling in value.items():
                if half not in HALVES:
                    raise _error(path, f"{where}.{key}.{half}: expected one of {', '.join(HALVES)}")
                _rate(path, f"{where}.{key}.{half}", ceiling)
        elif key in PAIRED_KEYS or key in NEUTRAL_KEYS:
            _rate(path, f"{where}.{key}", value)
        else:
            known = ", ".join((*PAIRED_KEYS, *NEUTRAL_KEYS, "framing"))
            raise _error(path, f"{where}.{key}: unknown key; expected one of {known}")


def _rate(path: Path, where: str, value: Any) -> None:
    check_rate(path, where, value)


def _error(path: Path, message: str) -> ValueError:
    return ThresholdsError(f"{path}: {message}")


def resolve(data: Mapping[str, Any], model_sections: list[str], framing: str) -> tuple[Ceilings, list[str]]:
    """The ceilings for ``framing`` (``neutral`` for nd / edr_min) and the sections they came from."""
    top = data.get("invariance", {})
    blocks = [("invariance", top), (f"invariance.framing.{framing}", top.get("framing", {}).get(framing, {}))]
    for name in model_sections:
        own = data.get("model", {}).get(name, {}).get("invariance", {})
        blocks += [
            (f'model."{name}".invariance', own),
            (f'model."{name}".invariance.framing.{framing}', own.get("framing", {}).get(framing, {})),
        ]
    merged: Ceilings = {}
    sources = []
    for where, block in blocks:
        used = [k for k in (*PAIRED_KEYS, *NEUTRAL_KEYS) if k in block]
        if used:
            sources.append(where)
        for key in used:
            value = block[key]
            if isinstance(value, Mapping):
                merged[key] = {**merged.get(key, {}), **{h: float(v) for h, v in value.items()}}
            else:
                merged[key] = {**merged.get(key, {}), "all": float(value)}
    return merged, sources
