"""The merged run's gate options: each one the merge is given, else the one the shards were given (shard.json's
``selection.options``, which every shard of the run shares), so that a merged run is gated as the whole run
the shards were parts of. Each option taken from the shards, or given to one side only, is said in one line:
a --baseline or --require-power the shards ran with is never dropped silently."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..baseline_file.format import sha256_of
from .shards import MANIFEST, ShardFolder, ShardFolderError


@dataclass(frozen=True)
class GateOptions:
    """What the merge command was given; None: not given (the shards' option holds)."""

    baseline: Path | None = None
    update_baseline: Path | None = None
    holm: bool | None = None
    fail_on: str | None = None
    require_power: bool | None = None


@dataclass(frozen=True)
class Gate:
    """The options the merged run is gated with."""

    baseline: Path | None
    update_baseline: Path | None
    holm: bool
    fail_on: str
    require_power: bool


def resolve(given: GateOptions, shard: ShardFolder, say: Callable[[str], None]) -> Gate:
    """The merged run's gate: ``given``'s options, the shards' where it gives none; each difference said."""
    theirs: dict[str, Any] = shard.manifest["selection"]["options"]
    return Gate(
        baseline=_baseline(given.baseline, theirs, shard, say),
        update_baseline=given.update_baseline,
        holm=_flag("--holm", given.holm, bool(theirs.get("holm")), say),
        fail_on=_choice(given.fail_on, str(theirs.get("fail_on") or "any"), say),
        require_power=_flag("--require-power", given.require_power, bool(theirs.get("require_power")), say),
    )


def _flag(flag: str, given: bool | None, theirs: bool, say: Callable[[str], None]) -> bool:
    if given is None:
        if theirs:
            say(f"{flag}: the shards ran with it, and so does the merged run")
        return theirs
    if given != theirs:
        say(f"{flag}: given to the merge, not to the shards; the merged run is gated with it")
    return given


def _choice(given: str | None, theirs: str, say: Callable[[str], None]) -> str:
    if given is None:
        if theirs != "any":
            say(f"--fail-on={theirs}: the shards ran with it, and so does the merged run")
        return theirs
    if given != theirs:
        say(
            f"--fail-on={given}: the shards ran with --fail-on={theirs}; the merged run is gated with {given}"
        )
    return given


def _baseline(
    given: Path | None, theirs: dict[str, Any], shard: ShardFolder, say: Callable[[str], None]
) -> Path | None:
    recorded = theirs.get("baseline")
    if given is not None:
        if recorded is None:
            say(f"--baseline {given}: the shards ran without one; the merged run is compared with it")
        elif Path(recorded).resolve() != given.resolve():
            say(f"--baseline {given}: replaces the shards' --baseline {recorded} for the merged run")
        return given
    if recorded is None:
        return None
    path, digest = Path(recorded), theirs.get("baseline_sha256")
    if not path.exists() or (digest is not None and (not path.is_file() or sha256_of(path) != digest)):
        state = "is not here" if not path.exists() else "has changed since they ran"
        raise ShardFolderError(
            f"{shard.path / MANIFEST}: options.baseline: the shards were compared with {recorded}, which "
            f"{state}; merge where it is, unchanged, or give --baseline FILE to compare the merged run with"
        )
    say(f"--baseline {recorded}: the shards were compared with it, and so is the merged run")
    return path
