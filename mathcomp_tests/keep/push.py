"""Fetch the branch's tip, commit the night's records on it, push; when the push is refused because another
job pushed first (the branch moved), fetch again, make the same additions and pruning on the new tip and try
again, up to TRIES times with short growing waits. A branch that holds anything but night records is not
touched (NotRecords); any other failure is a GitError.

With a retention (--keep-days), the branch's history is rolled with its tree: each commit is the only one,
holding the nights kept (no parent), pushed over the tip it was built on and no other (a lease: another
job's push in between is refused and retried like a moved branch). A clone of the branch then holds the
kept nights alone, not every night ever pushed and pruned since. Without a retention every commit is kept."""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import git
from .nights import Night
from .remote import Remote
from .tree import Plan, commit, next_tree

TRIES = 5
FIRST_WAIT_S = 0.5
"""The wait before the second try; each later one doubles it, with up to half as much again at random, so
that two jobs that collided once do not collide again in step."""


class NotRecords(Exception):
    """The branch holds something that is not a night record (a code branch, named by mistake): nothing is
    committed, pushed or pruned. The message says what, as a clause: a path and why."""


@dataclass(frozen=True)
class Kept:
    """What the keeping did: the branch's tip now (None: there is no branch, nothing was ever kept), what the
    last try planned, whether it pushed, and in how many tries."""

    tip: str | None
    plan: Plan
    pushed: bool
    tries: int


def remote_tip(git_dir: Path, remote: Remote, branch: str) -> str | None:
    """The object id ``branch`` has on the remote now, or None when the remote has no such branch."""
    ref = f"refs/heads/{branch}"
    listed = git.text(["ls-remote", remote.url, ref], git_dir=git_dir, timeout=git.NETWORK_S)
    for line in listed.splitlines():
        oid, _, name = line.partition("\t")
        if name == ref:
            return oid
    return None


def fetch(git_dir: Path, remote: Remote, branch: str) -> str | None:
    """The branch's tip fetched (its commit and tree, not its history), or None when there is none yet."""
    if remote_tip(git_dir, remote, branch) is None:
        return None
    local = "refs/keep/tip"
    git.run(
        ["fetch", "--quiet", "--no-tags", "--depth=1", remote.url, f"+refs/heads/{branch}:{local}"],
        git_dir=git_dir,
        timeout=git.NETWORK_S,
    )
    return git.text(["rev-parse", "--verify", local], git_dir=git_dir)


def _wait(attempt: int) -> float:
    return FIRST_WAIT_S * 2 ** (attempt - 1) * random.uniform(1.0, 1.5)


def keep(
    git_dir: Path,
    remote: Remote,
    branch: str,
    records: Sequence[Night],
    keep_days: int,
    say: Callable[[str], None],
) -> Kept:
    """Add ``records`` to ``branch`` and prune the nights older than ``keep_days`` (0: none), in one commit
    pushed to ``remote``; ``say`` hears of each retry. ``git_dir``: an empty bare repository of our own.
    NotRecords, before anything is pushed, when the branch holds anything but night records."""
    cutoff = dt.datetime.now() - dt.timedelta(days=keep_days) if keep_days else None
    for attempt in range(1, TRIES + 1):
        tip = fetch(git_dir, remote, branch)
        tree, plan = next_tree(git_dir, tip, records, cutoff)
        if plan.strays:
            raise NotRecords(next(iter(plan.strays.values())))
        if not plan.changes:
            return Kept(tip, plan, False, attempt)
        rolled = bool(keep_days)
        new = commit(git_dir, tree, None if rolled else tip, plan.message(keep_days, rolled=rolled))
        lease = [f"--force-with-lease=refs/heads/{branch}:{tip or ''}"] if rolled else []
        try:
            git.run(
                ["push", "--quiet", *lease, remote.url, f"{new}:refs/heads/{branch}"],
                git_dir=git_dir,
                timeout=git.NETWORK_S,
            )
        except git.GitError as refused:
            if remote_tip(git_dir, remote, branch) == tip:
                raise  # the branch did not move: the push failed for another reason
            if attempt == TRIES:
                raise git.GitError(
                    f"{branch} moved under each of {TRIES} pushes (other jobs pushed first); gave up: {refused}"
                ) from refused
            say(
                f"{branch} on {remote.shown} moved (another job pushed first); "
                f"trying again on its new tip (try {attempt + 1} of {TRIES})"
            )
            time.sleep(_wait(attempt))
            continue
        return Kept(new, plan, True, attempt)
    raise AssertionError("unreachable: the last try returns or raises")
