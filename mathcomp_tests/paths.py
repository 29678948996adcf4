"""Where the project's data lives, installed or in a checkout.

An installed wheel carries the data inside the package (``mathcomp_tests/fixtures/``,
``mathcomp_tests/thresholds.toml``); a checkout keeps ``fixtures/`` and ``thresholds.toml`` at its top
level. $MATHCOMP_FIXTURES replaces the whole fixtures folder.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
"""The checkout's top level (in an installed wheel, the site-packages folder: use the functions below)."""


def bundled() -> Path:
    """The fixtures shipped with this code: the package's own copy in a wheel, else the checkout's."""
    packaged = PACKAGE / "fixtures"
    return packaged if packaged.is_dir() else ROOT / "fixtures"


def fixtures() -> Path:
    """The fixtures folder in use: $MATHCOMP_FIXTURES, else the bundled one."""
    return Path(os.environ.get("MATHCOMP_FIXTURES") or bundled())


def default_thresholds() -> Path:
    """The ceilings shipped with this code, used when the rootdir has no thresholds.toml of its own."""
    packaged = PACKAGE / "thresholds.toml"
    return packaged if packaged.is_file() else ROOT / "thresholds.toml"


def shipped(relative: Path) -> Path:
    """A path written relative to this repository's top level (``fixtures/models/...``), where it is
    installed: under the bundled fixtures when it starts with ``fixtures/``, else under ROOT."""
    if relative.parts[:1] == ("fixtures",):
        return bundled().joinpath(*relative.parts[1:])
    return ROOT / relative
