"""The merged run, run: the suite's own pytest session, in the project where `mathcomp merge` is run, whose
model answers from the shards' records (merge/replay.py) and which selects the items the shards selected.
Its own checks (the project's conftest.py), ceilings, baseline comparison, Holm, power requirement,
narrowing, report.html, summary.json and --update-baseline are those of every run: the plugin finds this
plan among pytest's plugins (plugin/merged.py) and builds its Run from the plan's settings, answered by the
plan's replay, instead of from the options."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ..records import items as records_items
from ..run.facts import RunFacts
from ..run.folders import PARTNERS
from ..run.summary import Merged
from ..verdict.narrowing import item_name
from .rebuild import FOLDERS, Replay
from .shards import ShardFolder, ShardFolderError


@dataclass(eq=False)  # a plugin: hashed by identity
class MergePlan:
    """What the merged run's pytest session takes from the merge: the whole run's facts (its settings and id
    among them), what answers it, and the shards it answers from."""

    MERGE_PLAN: ClassVar[bool] = True
    """How plugin/merged.py knows the plan among pytest's plugins without importing this module."""

    run: RunFacts
    replay: Replay
    shards: list[ShardFolder]
    kept: dict[str, list[dict[str, Any]]]
    """The shards' records, by the subfolder of the run folder they are kept in."""
    out: Path
    """Where the merged folder will be once it is swapped in (it is built beside it: ``run.run_dir``)."""
    unmerged: list[str] = field(default_factory=list)
    """Why the shards do not make one whole run (merge/shards.py); none when they do."""

    @property
    def selected(self) -> frozenset[str]:
        """The items the shards' pytest sessions selected (the same in every shard: it is fingerprinted)."""
        return frozenset(self.shards[0].manifest["pytest"]["items"] or ())

    @property
    def narrowed_by(self) -> list[str]:
        """What narrowed the shards' selection (``-k 'neutral'``): the merged run was narrowed by it too."""
        return [str(m) for m in self.shards[0].manifest["pytest"]["narrowed_by"]]

    @property
    def collection(self) -> list[str]:
        """The shards' collection arguments (``--pyargs mathcomp_tests.suite``, or the testpaths of the
        project they ran in): the merged run collects as they did, here."""
        session = self.shards[0].manifest["pytest"]
        return [*(["--pyargs"] if session["pyargs"] else []), *map(str, session["args"])]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Only the items the shards selected: -k, -m, --deselect and node ids as the shards were given them."""
        wanted = self.selected
        dropped = [i for i in items if item_name(i.nodeid) not in wanted]
        if dropped:
            items[:] = [i for i in items if i not in dropped]
            config.hook.pytest_deselected(items=dropped)

    def facts(self, written: Mapping[str, int]) -> Merged:
        """The merge's facts for summary.json; ``written``: how many records the session wrote in each folder
        of the run folder ("" the top; a folder it wrote none in may be missing)."""
        return Merged(
            merged_from=merged_from(self.shards),
            model_identity=self.shards[0].summary.get("model_identity"),
            asked=asked(self.shards),
            unasked=self._unasked(written),
            unmerged=list(self.unmerged),
        )

    def _unasked(self, written: Mapping[str, int]) -> list[str]:
        """A reason per folder of the shards' records the whole run did not ask as many of (not partners/:
        which neutral partners a process asks depends on which cases it ran before, under xdist too)."""
        reasons = []
        for folder in (f for f in FOLDERS if f != PARTNERS):
            asked, theirs = written.get(folder, 0), len(self.kept[folder])
            if asked != theirs:
                reasons.append(
                    f"{theirs - asked} of the shards' {theirs} records of {folder or 'the fixed set'} were not "
                    "asked by the whole run"
                )
        return reasons


def merged_from(shards: Sequence[ShardFolder]) -> list[dict[str, Any]]:
    """summary.json's ``merged_from``: each shard's index, folder and run id."""
    return [
        {"index": s.index, "count": s.count, "folder": str(s.path.resolve()), "run_id": s.manifest["run_id"]}
        for s in shards
    ]


def asked(shards: Sequence[ShardFolder]) -> dict[str, dict[str, Any]]:
    """Per case id, what the shards sent for it: ``sent``, ``judge_sent`` and ``usage`` summed over their
    summaries of the case."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for shard in shards:
        for case in [*shard.summary.get("cases", []), *(shard.summary.get("generated_cases") or [])]:
            parts.setdefault(str(case.get("case")), []).append(case)
    out = {}
    for case, found in parts.items():
        usages = [c["usage"] for c in found if isinstance(c.get("usage"), dict)]
        usage: dict[str, Any] = {}
        if usages:
            for key in ("requests", "input_tokens", "output_tokens", *records_items.CACHED_USAGE):
                usage[key] = sum(int(u.get(key) or 0) for u in usages)
            costs = [float(u["cost_usd"]) for u in usages if u.get("cost_usd") is not None]
            usage["cost_usd"] = sum(costs) if costs else None
        out[case] = {
            "sent": sum(int(c.get("sent") or 0) for c in found),
            "judge_sent": sum(int(c.get("judge_sent") or 0) for c in found),
            "usage": usage,
        }
    return out


def run_suite(plan: MergePlan, say: Callable[[str], None]) -> int:
    """The merged run's pytest session in this process: pytest's exit code, 0 passed or 1 failed or
    incomplete. An interrupted session raises KeyboardInterrupt; any other end (a usage error, an internal
    error, nothing collected) is a ShardFolderError naming it: nothing of it is kept."""
    say(f"MathComp merge: running the suite over the answers of {len(plan.shards)} shards")
    code = pytest.main([*plan.collection, *session_args()], plugins=[plan])
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise ShardFolderError(
            f"the merged run's pytest session ended with exit status {int(code)} ({pytest.ExitCode(code).name}, "
            f"said above); nothing was merged"
        )
    return int(code)


def session_args() -> list[str]:
    """pytest's arguments for the merged run beyond its collection: the plugin, and no xdist workers (the
    plan lives in this process)."""
    workers = importlib.util.find_spec("xdist") is not None and not os.environ.get(
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    )
    quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")  # the plugin was imported before the session
    return ["-p", "mathcomp_tests.pytest_plugin", *quiet, *(["-n", "0"] if workers else [])]
