"""shard.json, written, versioned and read here only: what one shard of a sharded run covered, beside its
summary.json (docs/sharding.md).

Every shard of one run writes the same ``selection`` (the model, the cases, the whole selection's scenario
ids, the dataset's digest, the code version and the options that change answers) and the same
``fingerprint`` (its digest); ``covered`` is this shard's part. Shards whose fingerprints differ were not
made for one run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..baseline_file.format import sha256_of
from ..run.facts import RunFacts
from ..settings import ANSWER_FIELDS, GATE_FIELDS, conditions
from ..userfile import replace_text
from ..verdict.narrowing import item_name

NAME = "shard.json"
MANIFEST_VERSION = 2
"""The version written and the only one read. 2: ``pytest`` (how the shard's session collected and selected)."""


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


def options(run: RunFacts) -> dict[str, Any]:
    """The answer-changing options as plain JSON, with the digests of the files whose content decides."""
    s = run.settings
    out = {name: _plain(getattr(s, name)) for name in (*ANSWER_FIELDS, *GATE_FIELDS)}
    out["prompt_set"] = run.prompt_set
    out["model_revision"] = s.backend.model_revision
    out["scoring"] = s.backend.scoring
    out["thresholds_sha256"] = sha256_of(s.thresholds) if s.thresholds.is_file() else None
    out["identities_file_sha256"] = sha256_of(s.identities_file) if s.identities_file else None
    out["baseline_sha256"] = (
        sha256_of(s.baseline) if s.baseline is not None and s.baseline.is_file() else None
    )
    return out


def selection(run: RunFacts, tests: Sequence[str]) -> dict[str, Any]:
    """What every shard of the run shares: the whole selection (``tests``: every item the options select,
    ``test_framing[<id>]``), not this shard's part of it."""
    s = run.settings
    return {
        "model": s.model,
        "code_version": __version__,
        "dataset": {"name": run.dataset["name"], "sha256": run.dataset["sha256"]},
        "cases": [c.id for c in conditions(s)],
        "tests": list(tests),
        "scenario_ids": list(run.selection),
        "generated_scenario_ids": list(run.generated.scenarios) if s.generated and run.generated is not None else [],
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


def manifest(
    run: RunFacts, summary: Mapping[str, Any], tests: Sequence[str], session: Mapping[str, Any]
) -> dict[str, Any]:
    """shard.json of a finished shard (its summary.json built already); ``session`` is ``pytest_session``'s."""
    assert run.settings.shard is not None
    shared = selection(run, tests)
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
            "scenario_ids": list(run.scenarios),
            "generated_scenario_ids": list(run.generated_part) if run.settings.generated else [],
            "cases": [c["case"] for c in [*summary["cases"], *summary["generated_cases"]]],
        },
        "pytest": dict(session),
    }


def write(run: RunFacts, summary: Mapping[str, Any], tests: Sequence[str], session: Mapping[str, Any]) -> Path:
    """shard.json beside summary.json, replaced atomically."""
    text = json.dumps(manifest(run, summary, tests, session), indent=2, ensure_ascii=False)
    return replace_text(run.run_dir / NAME, text)


class ShardFormatError(ValueError):
    """A shard.json that is missing, unreadable or not as a shard writes it; the message names the file and
    the field."""


def load(path: Path) -> dict[str, Any]:
    """shard.json at ``path``, its version and every field checked (ShardFormatError otherwise)."""
    if not path.is_file():
        raise ShardFormatError(
            f"{path.parent}: no {NAME}; expected a shard's run folder (a run with --shard=I/N writes {NAME})"
        )
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ShardFormatError(f"{path}: cannot be read as JSON ({exc})") from exc
    expected = ("shard", "fingerprint", "selection", "run_id")
    if not isinstance(found, dict) or any(k not in found for k in expected):
        raise ShardFormatError(f"{path}: expected the {NAME} a shard writes ({', '.join(expected)})")
    damaged = manifest_errors(found)
    if damaged:
        raise ShardFormatError(f"{path}: {damaged}")
    return found


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
        return f"version is {found}; this mathcomp-tests reads {NAME} version {MANIFEST_VERSION}"
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
