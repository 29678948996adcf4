"""What a run leaves on disk: reports/<run-id>/ with results.jsonl, summary.json; reports/latest."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import run_folder, summary_format

RESULTS = run_folder.RESULTS
SUMMARY = summary_format.NAME
REPORT = "report.html"


RUN_ID_CHARS = 200
"""The longest run id a record folder may be named by."""
_STARTED = re.compile(r"^(\d{8}-\d{6})(?:-|$)")
_STARTED_FORMAT = "%Y%m%d-%H%M%S"


def new_run_id(model: str) -> str:
    """``<YYYYmmdd-HHMMSS>-<model>-<hex>``: the runner's local time the run started, the model, 4 hex digits."""
    slug = "".join(c if c.isalnum() or c in ".-" else "-" for c in model).strip("-")[:40]
    return f"{time.strftime(_STARTED_FORMAT)}-{slug}-{secrets.token_hex(2)}"


def safe_run_id(name: str) -> bool:
    """Whether ``name`` can name a record's folder: one plain path component of letters, digits, ``.``, ``_``,
    ``-`` and ``+``, a letter or digit first (no ``..``, no ``.git``, no option), at most 200 characters."""
    return (
        0 < len(name) <= RUN_ID_CHARS and name[0].isalnum() and all(c.isalnum() or c in "._-+" for c in name)
    )


def run_started(run_id: str) -> dt.datetime | None:
    """When the run ``run_id`` names started (its leading timestamp, as ``new_run_id`` writes it), or None."""
    found = _STARTED.match(run_id)
    if found is None:
        return None
    try:
        return dt.datetime.strptime(found.group(1), _STARTED_FORMAT)
    except ValueError:
        return None


class ResultsWriter:
    """Append-only JSONL, one line per prompt, flushed as written: a crash loses nothing written."""

    def __init__(self, run_dir: Path, worker: str):
        self.path = run_dir / f"results.{worker}.jsonl"
        run_dir.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - held open for the whole run
        self._lock = threading.Lock()

    def write(self, records: Iterable[Mapping[str, Any]]) -> None:
        with self._lock:
            for record in records:
                self._fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._fh.flush()

    def close(self) -> None:
        self._fh.close()


@dataclass(frozen=True)
class Merged:
    """results.jsonl once merged: its records, in its order, and a note for every line dropped."""

    records: list[dict[str, Any]]
    notes: list[str]


def merge_parts(run_dir: Path, key: Callable[[Mapping[str, Any]], Hashable]) -> Merged:
    """Join every process's results.<worker>.jsonl into results.jsonl (the parts are removed); returns
    its records (parsed once here: the summary and the report read them) and a note for every line dropped.

    One line per ``key``: where a case ran twice in one run (``--dist=each``, a rerun) the later answer
    stands, in the place of the first. A process killed while writing (an xdist worker, SIGKILL) leaves
    its part ending in a cut line: that line is dropped and said, every other line kept; so is a line
    that is not a JSON record anywhere else in a part.
    """
    target = run_dir / RESULTS
    sources = ([target] if target.exists() else []) + sorted(run_dir.glob("results.*.jsonl"))
    merged: dict[Hashable, tuple[str, dict[str, Any]]] = {}
    notes: list[str] = []
    for source in sources:
        lines = source.read_bytes().split(b"\n")
        kept = 0
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8")
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError(f"a {type(record).__name__}")
            except ValueError as exc:
                notes.append(
                    run_folder.dropped_note(source, number, kept)
                    if number == len(lines)
                    else f"{source}: line {number} is not a JSON record ({exc}); dropped, the other lines kept"
                )
                continue
            merged[key(record)] = (line + "\n", record)
            kept += 1
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        out.writelines(line for line, _ in merged.values())
    os.replace(tmp, target)
    for source in sources[1 if target in sources else 0 :]:
        source.unlink()
    return Merged([record for _, record in merged.values()], notes)


def point_latest(reports_dir: Path, run_dir: Path) -> None:
    """reports/latest -> the newest run, replaced atomically."""
    link = reports_dir / "latest"
    tmp = reports_dir / f".latest-{secrets.token_hex(4)}"
    os.symlink(run_dir.name, tmp)
    os.replace(tmp, link)


def read_records(run_dir: Path) -> list[dict[str, Any]]:
    """results.jsonl as a list of dicts (empty when the run wrote none)."""
    path = run_dir / RESULTS
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
