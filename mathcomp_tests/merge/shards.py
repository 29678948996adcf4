"""The shards' run folders read and checked before anything is merged: each one a finished shard
(shard.json and summary.json), all of one run (the same fingerprint), indexes 1..N each exactly once, and
every one complete. Nothing is guessed: whatever does not hold is one reason the merge is INCOMPLETE,
naming the folder and what is wrong with it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import summary_format
from ..listing import few
from ..records import results

MANIFEST = results.SHARD_MANIFEST
"""What a shard writes beside its summary.json (plugin/shard_manifest.py)."""


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
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise ShardFolderError(
            f"{path}: no {MANIFEST}; expected a shard's run folder (a run with --shard=I/N writes {MANIFEST})"
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ShardFolderError(f"{manifest_path}: cannot be read as JSON ({exc})") from exc
    expected = ("shard", "fingerprint", "selection", "run_id")
    if not isinstance(manifest, dict) or any(k not in manifest for k in expected):
        raise ShardFolderError(
            f"{manifest_path}: expected the {MANIFEST} a shard writes ({', '.join(expected)})"
        )
    damaged = manifest_errors(manifest)
    if damaged:
        raise ShardFolderError(f"{manifest_path}: {damaged}")
    try:
        summary = summary_format.load(path)
    except summary_format.MissingSummary as exc:
        raise ShardFolderError(f"{exc}; expected a finished shard's run folder") from exc
    except summary_format.SummaryError as exc:
        raise ShardFolderError(str(exc)) from exc
    return ShardFolder(path, manifest, summary)


MANIFEST_VERSION = results.SHARD_MANIFEST_VERSION
_SHAPE: tuple[tuple[str, type, str], ...] = (
    ("fingerprint", str, "the selection's sha256, a string"),
    ("run_id", str, "the shard's run id, a string"),
    ("selection", dict, "an object: the whole run's selection"),
    ("selection.model", str, "the model, a string"),
    ("selection.options", dict, "an object: the options that change answers"),
    ("selection.dataset", dict, "an object: the dataset's name and sha256"),
    ("selection.tests", list, "a list of the whole run's tests"),
    ("selection.scenario_ids", list, "a list of the whole selection's scenario ids"),
    ("shard", dict, "an object: this shard's index, count and source"),
    ("pytest", dict, "an object: how the shard's pytest session collected and selected"),
    ("pytest.args", list, "a list of the session's collection arguments"),
    ("pytest.pyargs", bool, "true or false: whether the arguments were --pyargs module names"),
    ("pytest.narrowed_by", list, "a list of what narrowed the selection (-k, -m, ...)"),
)


def manifest_errors(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a shard.json's fields (the first field that is not as written), or None."""
    if manifest.get("version") != MANIFEST_VERSION:
        found = json.dumps(manifest.get("version"))[:30]
        return f"version is {found}; this mathcomp-tests reads {MANIFEST} version {MANIFEST_VERSION}"
    for field, kind, what in _SHAPE:
        value: Any = manifest
        for key in field.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, kind):
            return f"{field} is {json.dumps(value)[:60]}; expected {what}"
    shard = manifest["shard"]
    index, count = shard.get("index"), shard.get("count")
    if (
        not all(isinstance(n, int) and not isinstance(n, bool) for n in (index, count))
        or not 1 <= index <= count
    ):
        return (
            f"shard.index is {json.dumps(index)[:30]} and shard.count {json.dumps(count)[:30]}; expected whole "
            "numbers with 1 <= index <= count"
        )
    return None


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
