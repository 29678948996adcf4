"""The branch's next tree and commit: the new records it does not hold yet added, a record it holds left as
it is (with other content too: records are never rewritten), and the nights older than the retention pruned.
Built with git's plumbing (hash-object, mktree, commit-tree) in the temporary repository: no work tree.

A night record on the branch is what this command writes, and nothing else: a folder named as a run id
holding summary.json and, when the night had them, its report and diff (record/night.py FILES: gzipped,
or plain in records written before), as plain files. Anything else
on the branch (a file, another folder, another file in a record) is a stray: a branch that holds one is not
a branch of records (a code branch, named by mistake), and only a record is ever pruned."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..listing import few
from ..record.night import FILES
from ..records.results import run_started, safe_run_id
from ..summary_format import NAME as SUMMARY
from ..summary_format import PACKED
from . import git
from .nights import Night

AUTHOR = ("mathcomp-tests", "mathcomp-tests@users.noreply.github.com")
"""Who commits, unless GIT_AUTHOR_NAME, GIT_COMMITTER_NAME and the rest say otherwise (they win over -c)."""
_FILE = "100644"
_FOLDER = "040000"
_PLAIN_FILES = (_FILE, "100755")


@dataclass(frozen=True)
class Entry:
    """One entry of a tree: its mode, type (blob, tree), object id and name."""

    mode: str
    kind: str
    oid: str
    name: str

    def line(self) -> str:
        return f"{self.mode} {self.kind} {self.oid}\t{self.name}"


@dataclass
class Plan:
    """What the next commit does to the branch, by run id."""

    added: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    differing: list[str] = field(default_factory=list)
    """Records the branch holds with other content than the one given: kept as they are."""
    too_old: list[str] = field(default_factory=list)
    """New records older than the retention: not added."""
    strays: dict[str, str] = field(default_factory=dict)
    """What the branch holds that is not a night record (``strays``): never pruned, and a branch that holds
    any is not one to push to."""

    @property
    def changes(self) -> bool:
        return bool(self.added or self.pruned)

    def message(self, keep_days: int, rolled: bool = False) -> str:
        """The commit message: a subject naming what was added and pruned, then every run id; ``rolled``: a
        line saying the commit replaces the branch's history (push.py)."""
        parts = []
        if self.added:
            parts.append(f"add {len(self.added)} night record(s): {few(self.added)}")
        if self.pruned:
            parts.append(f"prune {len(self.pruned)} older than {keep_days} days: {few(self.pruned)}")
        body = [f"added {r}" for r in self.added] + [f"pruned {r}" for r in self.pruned]
        if rolled:
            body.append(
                f"\nThe branch's only commit: it holds the nights of the last {keep_days} days, and the history "
                "before it is rolled away with the nights pruned (--keep-days)."
            )
        return "mathcomp keep: " + "; ".join(parts) + "\n\n" + "\n".join(body) + "\n"


def entries(git_dir: Path, treeish: str) -> list[Entry]:
    """The entries of ``treeish``'s tree."""
    found = git.run(["ls-tree", "-z", treeish], git_dir=git_dir).decode("utf-8", "surrogateescape")
    out = []
    for item in filter(None, found.split("\0")):
        head, _, name = item.partition("\t")
        mode, kind, oid = head.split()
        out.append(Entry(mode, kind, oid, name))
    return out


def strays(git_dir: Path, treeish: str) -> dict[str, str]:
    """What ``treeish``'s tree holds that is not a night record: each such top entry's name, with one clause
    saying what (a path and why); the entries beside the records first. Empty: it holds records alone."""
    listing = git.run(["ls-tree", "-r", "-t", "-z", treeish], git_dir=git_dir)
    top: dict[str, str] = {}
    inside: dict[str, dict[str, str]] = {}
    for item in filter(None, listing.decode("utf-8", "surrogateescape").split("\0")):
        head, _, path = item.partition("\t")
        folder, _, rest = path.partition("/")
        if rest:
            inside.setdefault(folder, {})[rest] = head.split()[0]
        else:
            top[folder] = head.split()[0]
    found = {
        name: f"{name}, not a night record" for name, mode in sorted(top.items()) if not _folder(name, mode)
    }
    for name in sorted(set(top) - set(found)):
        if (clause := _stray(name, inside.get(name, {}))) is not None:
            found[name] = clause
    return found


def _folder(name: str, mode: str) -> bool:
    """Whether a top entry can be a record: a folder named as a run id."""
    return mode == _FOLDER and safe_run_id(name)


def _stray(name: str, files: dict[str, str]) -> str | None:
    """What in the folder ``name`` (``files``: path inside it, mode) makes it no night record, or None."""
    for path, mode in sorted(files.items()):
        if path not in FILES or mode not in _PLAIN_FILES:
            return f"{name}/{path}, not a file of a night record"
    if SUMMARY not in files and PACKED not in files:
        return f"{name}/, a folder without {SUMMARY}"
    return None


def _mktree(git_dir: Path, items: Sequence[Entry]) -> str:
    listing = "".join(e.line() + "\0" for e in items).encode("utf-8", "surrogateescape")
    return git.text(["mktree", "-z"], git_dir=git_dir, stdin=listing)


def record_tree(git_dir: Path, record: Night) -> str:
    """The object id of the tree of ``record``'s folder (its files written into the repository)."""
    blobs = []
    for name, content in sorted(record.files.items()):
        oid = git.text(["hash-object", "-w", "--stdin"], git_dir=git_dir, stdin=content)
        blobs.append(Entry(_FILE, "blob", oid, name))
    return _mktree(git_dir, blobs)


def _old(name: str, cutoff: dt.datetime | None) -> bool:
    when = run_started(name)
    return cutoff is not None and when is not None and when < cutoff


def next_tree(
    git_dir: Path, tip: str | None, records: Sequence[Night], cutoff: dt.datetime | None
) -> tuple[str, Plan]:
    """The tree the branch's next commit holds on top of ``tip`` (None: a branch not there yet), and the
    plan that leads to it. ``cutoff``: the records of nights before it are pruned (None: every night is
    kept); a stray is never pruned, however old its name says it is."""
    held = {e.name: e for e in entries(git_dir, tip)} if tip else {}
    plan = Plan(strays=strays(git_dir, tip) if tip else {})
    for name, entry in sorted(held.items()):
        if entry.kind == "tree" and name not in plan.strays and _old(name, cutoff):
            plan.pruned.append(name)
            del held[name]
    for record in records:
        if _old(record.run_id, cutoff):
            plan.too_old.append(record.run_id)
            continue
        oid = record_tree(git_dir, record)
        there = held.get(record.run_id)
        if there is None:
            held[record.run_id] = Entry(_FOLDER, "tree", oid, record.run_id)
            plan.added.append(record.run_id)
        elif there.oid != oid:
            plan.differing.append(record.run_id)
    return _mktree(git_dir, list(held.values())), plan


def commit(git_dir: Path, tree: str, parent: str | None, message: str) -> str:
    """A commit of ``tree`` on ``parent`` (none: the branch's first, an orphan); its object id."""
    name, email = AUTHOR
    parents = ["-p", parent] if parent else []
    return git.text(
        ["commit-tree", tree, *parents, "-F", "-"],
        git_dir=git_dir,
        stdin=message.encode(),
        config=(f"user.name={name}", f"user.email={email}"),
    )
