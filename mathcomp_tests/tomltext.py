"""TOML files as users write them: a UTF-8 byte order mark (which Windows editors add) is not an error.

tomllib refuses the mark as "Invalid statement (line 1, column 1)"; the dataset reader already accepts it,
so every TOML file the suite reads (thresholds, identities, prompts, protocols) goes through ``load``, and
through ``read``, which says in one line what is wrong with a file that cannot be read as TOML.
"""

from __future__ import annotations

import codecs
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO


def load(fh: BinaryIO) -> dict[str, Any]:
    """``tomllib.load`` that skips a leading UTF-8 byte order mark; the same errors otherwise."""
    data = fh.read()
    return tomllib.loads(data.removeprefix(codecs.BOM_UTF8).decode("utf-8"))


def read(
    path: Path,
    error: Callable[[str], Exception],
    expected: str = "a TOML file",
    not_found: str = "file not found",
    hint: Callable[[tomllib.TOMLDecodeError], str] = lambda exc: "",
) -> dict[str, Any]:
    """The file's TOML; else ``error(message)`` raised, one line that starts with the path and names what
    was ``expected`` (``hint``: what to add to tomllib's own message for a file that is not TOML)."""
    try:
        with open(path, "rb") as fh:
            return load(fh)
    except FileNotFoundError as exc:
        raise error(f"{path}: {not_found}") from exc
    except IsADirectoryError as exc:
        raise error(f"{path}: a folder, not a file; expected {expected}") from exc
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror}); expected {expected}") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text; expected {expected}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}{hint(exc)}") from exc
