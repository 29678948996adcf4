"""The batches a run submitted, kept in the cache folder so that no batch is paid for twice: a submission is
the saved state of one batch the provider accepted.

One JSON file per batch under ``<cache folder>/batches/``, written (atomically) the moment the provider
created the batch, before anything waits on it: the batch id, which cache keys (custom ids) it holds, for
which model and server, and the provider's own details of it (``extras``: OpenAI's input file). A run killed
while waiting, or the next night, reads the open submissions and collects those batches instead of sending
their prompts again; a submission is marked done once the batch's answers are in the response cache, or once
its results could not be read in ``UNREAD_RUNS`` runs (outcome `unreadable`: its prompts are sent again). A
submission an earlier version wrote (``input_file_id`` where ``extras`` now is) reads as before, its input
file among the extras, and is written in today's form when it is next saved.

A submission that cannot be read is said in one line (file, line, what was expected) and stops the run before
it sends anything: its batch may hold answers the run would otherwise pay for again. A folder that takes no
file stops it the same way, before the first batch is created.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .protocol import SubmissionError

FOLDER = "batches"
EXPECTED = (
    "expected a batch record: one JSON object with id, owner (text), keys (a list of cache keys), created (a "
    "time) and extras (an object of texts)"
)
OLD_KEY = "input_file_id"
"""The key of the input file in a submission an earlier version wrote, read into ``extras`` under the same name."""
KEEP = (
    "its batch may hold answers this run would pay for again: mend the file, or move it away to send its "
    "prompts again"
)


@dataclass(frozen=True)
class Submission:
    id: str
    """The provider's batch id."""
    owner: str
    """The model and server the batch was sent to (a submission is resumed only by a run of the same)."""
    keys: tuple[str, ...]
    """The cache keys of its requests (each request's custom id)."""
    created: float
    done: bool = False
    outcome: str = ""
    """The batch's last status once done (completed, expired, cancelled, failed), or `unreadable`."""
    unread_runs: int = 0
    """Runs that found the batch ended but could not read its results (gone, refused, unreachable)."""
    extras: dict[str, str] = field(default_factory=dict)
    """The provider's own details of the batch (``Created.extras``), kept for whoever looks at it by hand."""


class Submissions:
    """The submissions of one cache folder (the folder of the response cache file)."""

    def __init__(self, cache_folder: Path):
        self.folder = cache_folder / FOLDER

    def _path(self, batch_id: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in batch_id)
        return self.folder / f"{safe}.json"

    def prepare(self) -> None:
        """The folder exists and takes a file; SubmissionError before any batch is created otherwise (a
        batch created but not recorded would be forgotten, and paid for again)."""
        probe = self.folder / f".probe.{os.getpid()}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise SubmissionError(
                f"--batch: the batch records cannot be written in {self.folder} ({type(exc).__name__}: "
                f"{exc.strerror or exc}); nothing was sent: make it a folder this run can write in"
            ) from exc

    def save(self, submission: Submission) -> None:
        """Write the submission whole or not at all (a kill mid-write leaves the previous version)."""
        path = self._path(submission.id)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({**asdict(submission), "keys": list(submission.keys)}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise SubmissionError(
                f"--batch: batch {submission.id} could not be recorded in {path} ({type(exc).__name__}: "
                f"{exc.strerror or exc}); cancel it at the provider or collect it by hand, or its prompts are "
                "sent and paid again"
            ) from exc

    def add(self, batch_id: str, extras: dict[str, str], owner: str, keys: list[str]) -> Submission:
        submission = Submission(batch_id, owner, tuple(keys), time.time(), extras=dict(extras))
        self.save(submission)
        return submission

    def close(self, submission: Submission, outcome: str) -> None:
        self.save(replace(submission, done=True, outcome=outcome))

    def open(self, owner: str) -> list[Submission]:
        """The batches of ``owner`` not yet collected, oldest first (another model's are left alone);
        SubmissionError naming the first submission that cannot be read."""
        found = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            submission = read(path)
            if submission.owner == owner and not submission.done:
                found.append(submission)
        return sorted(found, key=lambda r: r.created)


def read(path: Path) -> Submission:
    """The submission in ``path``; SubmissionError in one line (file, line, what was expected) otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror or exc}); {KEEP}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SubmissionError(f"{path}: line {line}: not UTF-8 text; {EXPECTED}; {KEEP}") from exc
    try:
        value = json.loads(text)
    except ValueError as exc:
        line, why = getattr(exc, "lineno", 1), getattr(exc, "msg", exc)
        raise SubmissionError(f"{path}: line {line}: not JSON ({why}); {EXPECTED}; {KEEP}") from exc
    try:
        return _submission(value)
    except (KeyError, TypeError, ValueError) as exc:
        raise SubmissionError(f"{path}: line 1: {exc.args[0] if exc.args else exc}; {EXPECTED}; {KEEP}") from exc


def _submission(value: Any) -> Submission:
    if not isinstance(value, dict):
        raise TypeError(f"a JSON {type(value).__name__}, not an object")
    missing = [k for k in ("id", "owner", "keys", "created") if k not in value]
    if missing:
        raise KeyError(f"no {', '.join(missing)}")
    keys = value["keys"]
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise TypeError("keys is not a list of cache keys")
    texts = ("id", "owner", "outcome")
    if not all(isinstance(value.get(k, ""), str) for k in texts) or not value["id"]:
        raise TypeError(f"one of {', '.join(texts)} is not text (or id is empty)")
    created, runs = value["created"], value.get("unread_runs", 0)
    if isinstance(created, bool) or not isinstance(created, (int, float)):
        raise TypeError("created is not a time")
    if isinstance(runs, bool) or not isinstance(runs, int) or not isinstance(value.get("done", False), bool):
        raise TypeError("done is not true or false, or unread_runs not a count")
    return Submission(
        value["id"], value["owner"], tuple(keys), float(created),
        value.get("done", False), value.get("outcome", ""), runs, _extras(value),
    )


def _extras(value: dict[str, Any]) -> dict[str, str]:
    """The submission's extras; a submission an earlier version wrote has its input file (``OLD_KEY``) instead."""
    if "extras" not in value:
        old = value.get(OLD_KEY, "")
        if not isinstance(old, str):
            raise TypeError(f"{OLD_KEY} is not text")
        return {OLD_KEY: old} if old else {}
    extras = value["extras"]
    if not isinstance(extras, dict) or not all(isinstance(v, str) for v in extras.values()):
        raise TypeError("extras is not an object of texts")
    return dict(extras)
