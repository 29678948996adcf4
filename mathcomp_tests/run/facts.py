"""What a run hands to the files written about it (summary.json, shard.json): plain facts, gathered once
from the Run (``facts_of``; a merge's from the whole run rebuilt, ``rebuilt``) and read by pure functions
(run/summary.py, merge/shard_format.py), which never reach back into the Run, its dataset, its thresholds
or its models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import prompts
from ..backends.identity import recorded_identity
from ..backends.models import ModelSpec
from ..config.invariance_ceilings import Ceilings
from ..data.generated_draw import Draw
from ..protocols import judge
from ..settings import Settings
from ..types import ALL_FRAMINGS, Condition
from .answering import Answering

if TYPE_CHECKING:  # the datasets (urllib) load with the first Run, not on import
    from ..data.datasets import LoadedDataset
    from .orchestrator import Run


@dataclass(frozen=True)
class Compared:
    """The baseline a run is compared with."""

    model: str
    """The model the baseline names (the file's, or --baseline-model)."""
    level: float
    """The per-test level its cases were compared at (alpha, or alpha / m under --holm)."""
    identity: str | None
    """The base model's identity, as the run's own ``model_identity``; None when no model is named."""


@dataclass(frozen=True)
class RunFacts:
    """One run as the files written about it see it."""

    run_id: str
    run_dir: Path
    settings: Settings
    spec: ModelSpec
    """The model asked, resolved."""
    chat_template: Mapping[str, str | None]
    """summary.json's ``chat_template`` (``chat_templates``)."""
    prompt_set: str
    dataset: Mapping[str, Any]
    """summary.json's ``dataset`` (``dataset_block``): its name, path, policy, audit and sha256."""
    selection: tuple[str, ...]
    """The ids of the whole selection's scenarios (every shard's)."""
    scenarios: tuple[str, ...]
    """The ids of the scenarios this run asks (a shard's part of the selection)."""
    generated: Draw | None
    """test_generated's whole draw; None under --generated=0, or when it was not asked for (``facts_of``)."""
    generated_part: tuple[str, ...]
    """The ids of the generated scenarios this run asks (a shard's part of the draw)."""
    threshold_sections: tuple[str, ...]
    """The [model.*] sections of thresholds.toml applied to the model's cases, in order."""
    ceilings_from: Mapping[str, Any]
    """Whose sections hold the model (config/thresholds.py ``ceilings_from``)."""
    baseline: Compared | None
    """None when the run is compared with no baseline."""
    invariance_ceilings: Mapping[str, Ceilings]
    """The [invariance] ceilings of each framing (against neutral)."""
    question_names: Mapping[str, tuple[str, str]]
    """How the question names Person A and Person B, by ``names_key``: std and every identity on each side."""


def names_key(condition: Condition) -> str:
    """The key of ``condition``'s persons in ``RunFacts.question_names``."""
    return "std" if condition.identity == "std" else f"{condition.identity_on}:{condition.identity}"


def chat_templates(
    settings: Settings, model: ModelSpec, baseline_model: ModelSpec | None, judge_model: ModelSpec | None
) -> dict[str, str | None]:
    """The --chat-template mode each model of the run whose prompts we render (hf, vllm, an api model
    under --api-batching=completions) is asked with (None: the server renders them, or not in this
    run). The baseline model is asked as the model is, or it would not be a fair baseline; the judge
    with its own template (protocols/judge.py CHAT_TEMPLATE)."""
    rendered = ("hf", "vllm", "api") if settings.backend.api_batching == "completions" else ("hf", "vllm")

    def mode(spec: ModelSpec | None, asked: str) -> str | None:
        return asked if spec is not None and spec.kind in rendered else None

    return {
        "model": mode(model, settings.chat_template),
        "baseline_model": mode(baseline_model, settings.chat_template),
        "judge": mode(judge_model, judge.CHAT_TEMPLATE),
    }


def dataset_block(dataset: LoadedDataset, sha256: str) -> dict[str, Any]:
    """summary.json's ``dataset``: ``sha256`` is the digest of its file."""
    return {
        "name": dataset.name,
        "path": str(dataset.path),
        "policy": dataset.policy,
        "excluded": [str(f) for f in dataset.excluded],
        "kept_invalid": [str(f) for f in dataset.kept_invalid],
        "audit_notes": len(dataset.notes),
        "sha256": sha256,
    }


def facts_of(run: Run, draw: bool = True) -> RunFacts:
    """``run``'s facts, gathered now: the baseline's level is the one its cases were compared at once the
    session has collected them. ``draw``: test_generated's draw is wanted (summary.json names it only when
    test_generated ran; shard.json always), drawn here if this process has not drawn it yet."""
    comparator, thresholds, spec, s = run.comparator, run.thresholds, run.spec, run.settings
    compared = None
    if comparator is not None:
        base, file = comparator.base, comparator.file
        identity = (
            None if base is None else recorded_identity(base, file.revision if file is not None else None)
        )
        compared = Compared(comparator.name, comparator.alpha, identity)
    names = {"std": prompts.std_names(run.prompt_set)} | {
        f"{on}:{name}": found for on, table in run.identities.items() for name, found in table.items()
    }
    generated = s.generated > 0 and draw
    return RunFacts(
        run_id=run.run_id,
        run_dir=run.run_dir,
        settings=s,
        spec=spec,
        chat_template=chat_templates(
            s, spec, comparator.model if comparator is not None else None, run.judge_spec
        ),
        prompt_set=run.prompt_set.name,
        dataset=dataset_block(run.dataset, run.dataset_sha256),
        selection=tuple(sc.id for sc in run.selection),
        scenarios=tuple(sc.id for sc in run.scenarios),
        generated=run.generated_draw() if generated else None,
        generated_part=tuple(sc.id for sc in run.generated) if generated else (),
        threshold_sections=tuple(thresholds.sections(spec)),
        ceilings_from=thresholds.ceilings_from(spec),
        baseline=compared,
        invariance_ceilings={f: thresholds.invariance(spec, f)[0] for f in ALL_FRAMINGS},
        question_names={key: (n.a_question, n.b_question) for key, n in names.items()},
    )


def rebuilt(settings: Settings, run_id: str, answering: Answering) -> RunFacts:
    """The facts of the run ``settings`` make, answered by ``answering`` (a merge's whole run, checked before
    its pytest session builds the Run it asks; no case ran, so test_generated's draw is not named); the errors
    of a Run that cannot be built (SelectionError, BaselineError, ThresholdsError, OSError and ValueError for
    files not there as expected)."""
    from .orchestrator import Run

    run = Run(settings, run_id, answering=answering)
    try:
        return facts_of(run, draw=False)
    finally:
        run.close()
