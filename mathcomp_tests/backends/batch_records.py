"""The batches a run created, kept in the cache folder so that no batch is paid for twice.

One JSON file per batch under ``<cache folder>/batches/``, written (atomically) the moment the provider
created the batch, before anything waits on it: the batch id, its input file, which cache keys (custom
ids) it holds, and for which model and server. A run killed while waiting, or the next night, reads the
open records and collects those batches instead of sending their prompts again; a record is marked done
once the batch's answers are in the response cache, or once its results could not be read in
``UNREAD_RUNS`` runs (outcome `unreadable`: its prompts are sent again).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

FOLDER = "batches"


@dataclass(frozen=True)
class BatchRecord:
    id: str
    """The provider's batch id."""
    input_file_id: str
    owner: str
    """The model and server the batch was sent to (a record is resumed only by a run of the same)."""
    keys: tuple[str, ...]
    """The cache keys of its requests (each request's custom id)."""
    created: float
    done: bool = False
    outcome: str = ""
    """The batch's last status once done (completed, expired, cancelled, failed), or `unreadable`."""
    unread_runs: int = 0
    """Runs that found the batch ended but could not read its results (gone, refused, unreachable)."""


class BatchRecords:
    """The records of one cache folder (the folder of the response cache file)."""

    def __init__(self, cache_folder: Path):
        self.folder = cache_folder / FOLDER

    def _path(self, batch_id: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in batch_id)
        return self.folder / f"{safe}.json"

    def save(self, record: BatchRecord) -> None:
        """Write the record whole or not at all (a kill mid-write leaves the previous version)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self._path(record.id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**asdict(record), "keys": list(record.keys)}), encoding="utf-8")
        os.replace(tmp, path)

    def add(self, batch_id: str, input_file_id: str, owner: str, keys: list[str]) -> BatchRecord:
        record = BatchRecord(batch_id, input_file_id, owner, tuple(keys), time.time())
        self.save(record)
        return record

    def close(self, record: BatchRecord, outcome: str) -> None:
        self.save(replace(record, done=True, outcome=outcome))

    def open(self, owner: str) -> list[BatchRecord]:
        """The batches of ``owner`` not yet collected, oldest first (a record that is not ours is skipped)."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                record = BatchRecord(
                    str(data["id"]),
                    str(data["input_file_id"]),
                    str(data["owner"]),
                    tuple(str(k) for k in data["keys"]),
                    float(data["created"]),
                    bool(data.get("done", False)),
                    str(data.get("outcome", "")),
                    int(data.get("unread_runs", 0)),
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if record.owner == owner and not record.done:
                found.append(record)
        return sorted(found, key=lambda r: r.created)
