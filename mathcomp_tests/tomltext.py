"""TOML files as users write them: a UTF-8 byte order mark (which Windows editors add) is not an error.

tomllib refuses the mark as "Invalid statement (line 1, column 1)"; the dataset reader already accepts it,
so every TOML file the suite reads (thresholds, identities, prompts, protocols) goes through ``load``.
"""

from __future__ import annotations

import codecs
import tomllib
from typing import Any, BinaryIO


def load(fh: BinaryIO) -> dict[str, Any]:
    """``tomllib.load`` that skips a leading UTF-8 byte order mark; the same errors otherwise."""
    data = fh.read()
    return tomllib.loads(data.removeprefix(codecs.BOM_UTF8).decode("utf-8"))
