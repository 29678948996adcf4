"""Where the project's data lives: `fixtures/` beside the package, or $MATHCOMP_FIXTURES."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fixtures() -> Path:
    return Path(os.environ.get("MATHCOMP_FIXTURES", ROOT / "fixtures"))
