"""The shards' run folders read and checked before anything is merged: each one a finished shard
(shard.json and summary.json), all of one run (the same fingerprint), indexes 1..N each exactly once, and
every one complete. Nothing is guessed: whatever does not hold is one reason the merge is INCOMPLETE,
naming the folder and what is wrong with it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import summary_format
from ..listing import few
from . import shard_format

MANIFEST = shard_format.NAME
"""What a shard writes beside its summary.json (merge/shard_format.py)."""


class ShardFolderError(ValueError):
    """A folder that is not a finished shard's run folder (a usage error); the message names it."""


@dataclass(frozen=True)
class ShardFolder:
    """One shard's run folder, as read."""

    path: Path
    manifest: dict[str, Any]
    summary: dict[str, Any]

    @property
    def index(self) -> int:
        return int(self.manifest["shard"]["index"])

    @property
    def count(self) -> int:
        return int(self.manifest["shard"]["count"])

    @property
    def fingerprint(self) -> str:
        return str(self.manifest["fingerprint"])

    @property
    def name(self) -> str:
        return f"shard {self.index} of {self.count} ({self.path})"


def read(path: Path) -> ShardFolder:
    """A shard's folder; ShardFolderError (one line naming it) for anything else."""
    if not path.is_dir():
        raise ShardFolderError(
            f"{path}: no such folder; expected a shard's run folder (written by --shard=I/N)"
        )
    try:
        manifest = shard_format.load(path / MANIFEST)
    except shard_format.ShardFormatError as exc:
        raise ShardFolderError(str(exc)) from exc
    try:
        summary = summary_format.load(path)
    except summary_format.MissingSummary as exc:
        raise ShardFolderError(f"{exc}; expected a finished shard's run folder") from exc
    except summary_format.SummaryError as exc:
        raise ShardFolderError(str(exc)) from exc
    return ShardFolder(path, manifest, summary)


@dataclass(frozen=True)
class Checked:
    """The shards that belong to the run (one per index, in index order), and why the merge is incomplete."""

    shards: list[ShardFolder]
    reasons: list[str]
    count: int


def check(folders: Sequence[ShardFolder]) -> Checked:
    """Every reason the shards do not make one whole, complete run (none: they do)."""
    votes = Counter(f.fingerprint for f in folders)
    reference = next(f for f in folders if votes[f.fingerprint] == max(votes.values()))
    reasons: list[str] = []
    ours = []
    for folder in folders:
        if folder.fingerprint != reference.fingerprint:
            differs = few(differences(reference.manifest["selection"], folder.manifest["selection"]), 4)
            reasons.append(
                f"{folder.name} is from another run: its selection differs in {differs} from that of "
                f"{reference.path}"
            )
        elif folder.count != reference.count:
            reasons.append(
                f"{folder.name} is of {folder.count} shards, {reference.name} of {reference.count}"
            )
        else:
            ours.append(folder)
    count = reference.count
    by_index: dict[int, list[ShardFolder]] = {}
    for folder in ours:
        by_index.setdefault(folder.index, []).append(folder)
    for index in range(1, count + 1):
        given = by_index.get(index, [])
        if not given:
            reasons.append(f"shard {index} of {count} missing")
        elif len(given) > 1:
            reasons.append(
                f"shard {index} of {count} given {len(given)} times: {' and '.join(str(f.path) for f in given)}"
            )
    for folder in ours:
        if summary_format.is_incomplete(folder.summary):
            why = (
                "; ".join(summary_format.incomplete_reasons(folder.summary)) or "its summary says incomplete"
            )
            reasons.append(f"{folder.name} is incomplete: {why}")
        elif _session(folder) != _session(reference) and not summary_format.is_incomplete(reference.summary):
            reasons.append(
                f"{folder.name} selected other items than {reference.name}: pytest narrowed it by "
                f"{_narrowed(folder)}, the other by {_narrowed(reference)}; run every shard with the same "
                "selection"
            )
    shards = [by_index[i][0] for i in sorted(by_index)]
    return Checked(shards, reasons, count)


def _session(folder: ShardFolder) -> tuple[object, ...]:
    """What the merged run takes of a shard's pytest session: its collection and its selected items."""
    session = folder.manifest["pytest"]
    return session["args"], session["pyargs"], session.get("items")


def _narrowed(folder: ShardFolder) -> str:
    return " and ".join(map(str, folder.manifest["pytest"]["narrowed_by"])) or "nothing"


def differences(ours: Mapping[str, Any], theirs: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The keys (dotted, ``options.limit``) whose values differ between two selections."""
    out = []
    for key in sorted({*ours, *theirs}):
        a, b = ours.get(key), theirs.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}")
    return out
