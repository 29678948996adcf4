"""What every thresholds.toml table shares: its error type and the check of a ceiling's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..finite import problem


class ThresholdsError(ValueError):
    """thresholds.toml has a key or value it should not; the message names the file and the key."""


def check_rate(path: Path, where: str, value: Any) -> None:
    """A ceiling is a finite number from 0 to 1 (a share); anything else (nan and inf too, which TOML
    allows) names the file and the key."""
    found = problem(value, 0, 1)
    if found is not None:
        raise ThresholdsError(f"{path}: {where} = {value!r}; {found}")
