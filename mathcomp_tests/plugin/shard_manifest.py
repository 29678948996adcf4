"""shard.json: what one shard of a sharded run covered, beside its summary.json (docs/sharding.md).

Every shard of one run writes the same ``selection`` (the model, the cases, the whole selection's scenario
ids, the dataset's digest, the code version and the options that change answers) and the same
``fingerprint`` (its digest); ``covered`` is this shard's part. Shards whose fingerprints differ were not
made for one run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..records import results
from ..run import Run
from ..scoring.baseline import sha256_of
from ..settings import ANSWER_FIELDS, GATE_FIELDS, conditions
from ..verdict.narrowing import item_name
from . import matrix

NAME = results.SHARD_MANIFEST
MANIFEST_VERSION = results.SHARD_MANIFEST_VERSION


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


def options(run: Run) -> dict[str, Any]:
    """The answer-changing options as plain JSON, with the digests of the files whose content decides."""
    s = run.settings
    out = {name: _plain(getattr(s, name)) for name in (*ANSWER_FIELDS, *GATE_FIELDS)}
    out["prompt_set"] = run.prompt_set.name
    out["model_revision"] = s.backend.model_revision
    out["scoring"] = s.backend.scoring
    out["thresholds_sha256"] = sha256_of(s.thresholds) if s.thresholds.is_file() else None
    out["identities_file_sha256"] = sha256_of(s.identities_file) if s.identities_file else None
    out["baseline_sha256"] = (
        sha256_of(s.baseline) if s.baseline is not None and s.baseline.is_file() else None
    )
    return out


def selection(run: Run) -> dict[str, Any]:
    """What every shard of the run shares: the whole selection, not this shard's part of it."""
    s = run.settings
    return {
        "model": s.model,
        "code_version": __version__,
        "dataset": {"name": run.dataset.name, "sha256": sha256_of(run.dataset.path)},
        "cases": [c.id for c in conditions(s)],
        "tests": [f"{test}[{case}]" for test, case in matrix.whole(run)],
        "scenario_ids": [sc.id for sc in run.selection],
        "generated_scenario_ids": list(run.generated_draw().scenarios) if s.generated else [],
        "options": options(run),
    }


def pytest_session(
    args: Sequence[str], pyargs: bool, selected: Iterable[str] | None, means: Sequence[str]
) -> dict[str, Any]:
    """shard.json's ``pytest``: how the shard's session collected (its arguments, --pyargs), the items it
    selected (``test_framing[<id>]``, sorted; None when it stopped before collection ended) and what narrowed
    them (plugin/narrowing.py's words: ``-k 'neutral'``). The merged run collects and selects the same
    (merge/session.py)."""
    items = None if selected is None else sorted({item_name(nodeid) for nodeid in selected})
    return {"args": list(args), "pyargs": pyargs, "items": items, "narrowed_by": list(means)}


def fingerprint(shared: Mapping[str, Any]) -> str:
    """sha256 of the shared selection as canonical JSON."""
    return hashlib.sha256(json.dumps(shared, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def manifest(run: Run, summary: Mapping[str, Any], session: Mapping[str, Any]) -> dict[str, Any]:
    """shard.json of a finished shard (its summary.json built already); ``session`` is ``pytest_session``'s."""
    assert run.settings.shard is not None
    shared = selection(run)
    return {
        "version": MANIFEST_VERSION,
        "shard": run.settings.shard.as_dict(),
        "run_id": run.run_id,
        "status": summary["status"],
        "incomplete_reasons": list(summary["incomplete_reasons"]),
        "model_identity": summary.get("model_identity"),
        "fingerprint": fingerprint(shared),
        "selection": shared,
        "covered": {
            "scenario_ids": [sc.id for sc in run.scenarios],
            "generated_scenario_ids": [sc.id for sc in run.generated] if run.settings.generated else [],
            "cases": [c["case"] for c in [*summary["cases"], *summary["generated_cases"]]],
        },
        "pytest": dict(session),
    }


def write(run: Run, summary: Mapping[str, Any], session: Mapping[str, Any]) -> Path:
    """shard.json beside summary.json, replaced atomically."""
    path = run.run_dir / NAME
    tmp = path.with_suffix(".tmp")
    text = json.dumps(manifest(run, summary, session), indent=2, ensure_ascii=False)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
