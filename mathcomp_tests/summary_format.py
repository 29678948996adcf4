"""summary.json as a file: its version, how it is written (atomically, no NaN) and how a reader loads one, and
whether it says its run is incomplete.

run/summary.py builds every summary.json (a run's, and the stand-in of a run that wrote none); this
module is what every reader shares, so that no reader reads the version or the completeness keys on its
own. A file without ``version`` is the format before versions (1) and is read as it is; a version newer
than this code knows is refused in one line naming the file.
docs/results.md ("summary.json, key by key") is the schema.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .finite import json_safe

NAME = "summary.json"
PACKED = NAME + ".gz"
"""A night keeps its summary gzipped (record/night.py); every reader reads either."""
VERSION = 2
"""The format written now. 1: the files written before summary.json said its version (read as they are)."""
COMPLETE = "complete"
INCOMPLETE = "incomplete"
EXPECTED = f"expected the {NAME} a suite run writes"


class SummaryError(ValueError):
    """A summary.json that cannot be read; the message names the file and what was expected."""


class MissingSummary(SummaryError):
    """A folder without summary.json: not a finished run folder."""


class DamagedSummary(SummaryError):
    """A summary.json that is not what a suite run writes (not JSON, not an object, a version not known)."""


def version(summary: Mapping[str, Any], path: Path | str) -> int:
    """The summary's format (1 when it names none); DamagedSummary for a version this code cannot read."""
    found = summary.get("version", 1)
    if not isinstance(found, int) or isinstance(found, bool) or found < 1:
        raise DamagedSummary(f"{path}: version {json.dumps(found)}; expected a whole number from 1 to {VERSION}")
    if found > VERSION:
        raise DamagedSummary(
            f"{path}: version {found}, newer than this mathcomp-tests reads (versions 1 to {VERSION}); "
            "upgrade mathcomp-tests to read it"
        )
    return found


def write(run_dir: Path, summary: Mapping[str, Any]) -> Path:
    """summary.json in ``run_dir``, replaced atomically. JSON has no NaN: a number nothing could compute is
    written as null, never as NaN."""
    path = run_dir / NAME
    tmp = path.with_suffix(".tmp")
    text = json.dumps(json_safe(summary), indent=2, ensure_ascii=False, allow_nan=False)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def path_in(folder: Path) -> Path:
    """The summary ``folder`` holds: summary.json, else a record's summary.json.gz (either may be missing)."""
    plain = folder / NAME
    return (
        folder / PACKED
        if not plain.exists() and not plain.is_symlink() and (folder / PACKED).exists()
        else plain
    )


def load(run_dir: Path) -> dict[str, Any]:
    """``run_dir``/summary.json (or a record's summary.json.gz) as a dict, its version checked (``version``)."""
    path = path_in(run_dir)
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.name == PACKED else raw).decode("utf-8")
    except FileNotFoundError as exc:
        raise MissingSummary(f"{run_dir}: not a finished run folder (no {NAME})") from exc
    except OSError as exc:  # gzip.BadGzipFile and EOFError too: a packed summary that does not unpack
        raise DamagedSummary(
            f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); {EXPECTED}"
        ) from exc
    except (EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise DamagedSummary(f"{path}: cannot be read ({exc}); {EXPECTED}") from exc
    try:
        summary = json.loads(text)
    except ValueError as exc:
        raise DamagedSummary(f"{path}: not valid JSON ({exc}); {EXPECTED}") from exc
    if not isinstance(summary, dict):
        raise DamagedSummary(f"{path}: not a JSON object; {EXPECTED}")
    version(summary, path)
    return summary


def completeness(reasons: list[str]) -> dict[str, Any]:
    """The two keys that say whether a run is complete, as every version-2 summary.json spells them."""
    return {"status": INCOMPLETE if reasons else COMPLETE, "incomplete_reasons": list(reasons)}


def incomplete_reasons(summary: Mapping[str, Any] | None) -> list[str]:
    """Why the run is incomplete, one sentence each (none for a complete run, or one that did not say why)."""
    found = (summary or {}).get("incomplete_reasons")
    if found is None:
        return []
    return [str(r) for r in found] if isinstance(found, (list, tuple)) else [str(found)]


def is_incomplete(summary: Mapping[str, Any] | None) -> bool:
    """Whether a summary says its run is incomplete: ``status`` says so, or it gives a reason (a summary
    with neither, such as one written before runs said, was written by a complete run)."""
    return (summary or {}).get("status") == INCOMPLETE or bool(incomplete_reasons(summary))
