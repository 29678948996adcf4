"""Where a run belongs in history: its model by identity (summary.json's ``model_identity``: the weights'
digest for local weights, so a copied or re-spelled path is the same model), its role (the base, a
fine-tune compared with it, or a run on its own), the axis it shares (runs of another selection or data
set get an axis of their own), whether its night completed, and where each case first failed."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from .. import summary_format
from ..backends.identity import WEIGHTS_PREFIX

SELECTION_KEYS = ("framings", "positions", "identities", "formats", "protocols")


@dataclass(frozen=True)
class Placement:
    group: str
    """The group's name as the page shows it (the model as first written, its identity where they differ)."""
    identity: str
    role: str
    """base (the model the group is compared with), fine-tune (compared with it) or run."""


def identity(summary: Mapping[str, Any]) -> str:
    """summary.json's model_identity; older summaries (written before it): what the suite would have
    recorded (see ``_before_identity``), else the canonical, resolved, or given model."""
    return str(
        summary.get("model_identity")
        or _before_identity(summary)
        or summary.get("canonical")
        or summary.get("resolved")
        or summary["model"]
    )


def _before_identity(summary: Mapping[str, Any]) -> str | None:
    """The identity of local weights in a summary written before ``model_identity``: such a summary named
    them by their path (``canonical``: ``hf:/abs/dir``) and kept their digest as ``revision`` (unless
    --model-revision set it); the suite now records ``weights:<digest>``, so the nights before the upgrade
    and after it are one model. None: not local weights, or no digest recorded."""
    canonical, revision = summary.get("canonical"), summary.get("revision")
    if not (isinstance(canonical, str) and isinstance(revision, str)) or summary.get("model_revision"):
        return None
    path = canonical.removeprefix("hf:")
    local = path != canonical and (PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute())
    return WEIGHTS_PREFIX + revision if local and re.fullmatch(r"[0-9a-f]{12}", revision) else None


def _names(summary: Mapping[str, Any]) -> list[str]:
    return [str(n) for k in ("model", "resolved", "canonical") if (n := summary.get(k))]


def base_model(summary: Mapping[str, Any]) -> str | None:
    """The model of the baseline the run was compared with (None: no baseline)."""
    return ((summary.get("baseline") or {}).get("model")) or None


def base_identity(summary: Mapping[str, Any], known: Mapping[str, str]) -> str | None:
    """The identity of the baseline's model: as summary.json recorded it, else the identity of a run
    here under the name the baseline gives (a relative directory read from the baseline file's folder),
    else that name."""
    compared = summary.get("baseline") or {}
    if compared.get("model_identity"):
        return str(compared["model_identity"])
    name = base_model(summary)
    if not name:
        return None
    return known.get(name) or known.get(_beside(str(name), compared.get("source"))) or name


def _beside(name: str, source: Any) -> str:
    """A baseline's ``hf:<relative directory>`` as the suite reads it: from the baseline file's folder
    (summaries written before ``baseline.model_identity`` kept only the name as the file spells it)."""
    path = name.removeprefix("hf:")
    if path == name or not isinstance(source, str) or PurePosixPath(path).is_absolute():
        return name
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    return "hf:" + os.path.normpath(folder / path)


def _label(key: str, written: str | None) -> str:
    if written is None or written == key:
        return key
    return f"{written} ({key})" if key.startswith("weights:") else key


def bare(summary: Mapping[str, Any]) -> bool:
    """Whether the record names its model only as given (no identity, resolved or canonical name, no
    baseline): a stand-in's (`mathcomp record --stand-in`: the run ended before the suite resolved it)."""
    keys = ("model_identity", "canonical", "resolved", "baseline")
    return not any(summary.get(k) for k in keys)


def joins(summaries: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """For each bare record (``bare``: a stand-in), the index of the run whose model it is: the nearest run
    before it (``summaries`` oldest first), else the first after it, that is not bare and names the model
    the stand-in was given (as its model, resolved or canonical name); None for every other record and a
    stand-in of a model no run here names. A stand-in of local weights would otherwise be a model of its own,
    the string as given, not the weights' digest its model's runs go by."""
    named = [None if bare(s) else set(_names(s)) for s in summaries]
    out: list[int | None] = []
    for i, s in enumerate(summaries):
        having = [j for j, names in enumerate(named) if names is not None and str(s["model"]) in names]
        before = [j for j in having if j < i]
        out.append(None if named[i] is not None else before[-1] if before else having[0] if having else None)
    return out


def place(summaries: Sequence[Mapping[str, Any]], group: str | None = None) -> list[Placement]:
    """Each run's group (``group`` for all when given, else its base's identity, else its own) and role; a
    stand-in takes the place of the run of its model (``joins``).

    A run compared with a baseline of its own model is that model's base run, not a fine-tune of it."""
    known: dict[str, str] = {}
    written: dict[str, str] = {}
    for s in summaries:
        own = identity(s)
        written.setdefault(own, str(s["model"]))
        for name in (own, *_names(s)):
            known.setdefault(name, own)
    bases = [base_identity(s, known) for s in summaries]
    base_set = {b for b in bases if b is not None}
    out = []
    for s, base in zip(summaries, bases, strict=True):
        own = identity(s)
        role = "fine-tune" if base is not None and base != own else "base" if own in base_set else "run"
        key = base or own
        out.append(Placement(group or _label(key, written.get(key)), own, role))
    return [out[j] if j is not None else where for where, j in zip(out, joins(summaries), strict=True)]


def axis(summary: Mapping[str, Any]) -> str:
    """What the runs on one x axis share: the selection (framings, positions, identities, formats,
    protocols), the data set and the prompt set. A partial run (-k, --limit) keeps its selection's axis."""
    chosen = summary.get("selection") or {}
    parts = [
        f"{k}: {', '.join(map(str, chosen[k]))}" for k in SELECTION_KEYS if isinstance(chosen.get(k), list)
    ]
    if not parts:
        return UNRECORDED
    dataset = (summary.get("dataset") or {}).get("name")
    extra = [f"data: {dataset}"] if dataset else []
    extra += [f"prompts: {summary['prompt_set']}"] if summary.get("prompt_set") else []
    return "; ".join(parts + extra)


UNRECORDED = "selection not recorded"


def axes(summaries: Sequence[Mapping[str, Any]], placed: Sequence[Placement]) -> list[str]:
    """Each run's axis; a run that recorded no selection (a night cut short before the suite wrote its
    summary: the CI's stand-in record) joins the axis of its group's run before it, else the group's first."""
    own = [axis(s) for s in summaries]
    out = []
    for i, (mine, where) in enumerate(zip(own, placed, strict=True)):
        if mine == UNRECORDED:
            group = [
                a for a, p in zip(own, placed, strict=True) if p.group == where.group and a != UNRECORDED
            ]
            before = [
                a
                for a, p in zip(own[:i], placed[:i], strict=True)
                if p.group == where.group and a != UNRECORDED
            ]
            mine = before[-1] if before else group[0] if group else mine
        out.append(mine)
    return out


def status(summary: Mapping[str, Any]) -> tuple[bool, tuple[str, ...]]:
    """(complete, the reasons it is not), as summary_format.is_incomplete decides."""
    return not summary_format.is_incomplete(summary), tuple(summary_format.incomplete_reasons(summary))


def failed_cases(summary: Mapping[str, Any]) -> frozenset[str]:
    """The cases that did not pass (failed or errored), generated ones included."""
    every = [*summary["cases"], *(summary.get("generated_cases") or ())]
    return frozenset(str(c["case"]) for c in every if not c.get("passed", True))


@dataclass(frozen=True)
class FirstFailure:
    case: str
    run_id: str
    """The first run (oldest first) in which the case failed."""
    failed_in: int
    runs: int
    failing_now: bool
    """Whether the case fails in the latest run that has it."""


def first_failures(runs: Sequence[tuple[str, frozenset[str], frozenset[str]]]) -> list[FirstFailure]:
    """``runs``: (run id, cases it ran, cases that failed), in any order; the runs are read oldest first
    (run ids start with their time). One entry per case that ever failed, in the order they first failed."""
    ordered = sorted(runs, key=lambda r: r[0])
    out: dict[str, FirstFailure] = {}
    for run_id, _, failed in ordered:
        for case in sorted(failed):
            if case not in out:
                having = [r for r in ordered if case in r[1]]
                out[case] = FirstFailure(
                    case, run_id, sum(case in r[2] for r in having), len(having), case in having[-1][2]
                )
    return list(out.values())
