"""What every thresholds.toml table shares: its error type and the check of a ceiling's value."""

from __future__ import annotations

from pathlib import Path
from typing import Any


class ThresholdsError(ValueError):
    """thresholds.toml has a key or value it should not; the message names the file and the key."""


def check_rate(path: Path, where: str, value: Any) -> None:
    """A ceiling is a number from 0 to 1 (a share); anything else names the file and the key."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ThresholdsError(f"{path}: {where} = {value!r}; expected a number between 0 and 1")
