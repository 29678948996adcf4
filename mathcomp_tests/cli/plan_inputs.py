"""What `mathcomp plan` reads (cli/plan.py): the dataset's golds, the base's answers and label probabilities
(a run folder, its summary.json or a baseline file), and the thresholds file's max_increase. A plan writes
nothing."""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import dataclass
from pathlib import Path

from .command import usage_error


class PlanError(Exception):
    """Input that is there but cannot be used (a damaged file); the message names it."""


@dataclass(frozen=True)
class Dataset:
    name: str
    golds: dict[str, str]


@dataclass(frozen=True)
class Base:
    source: Path
    model: str
    golds: dict[str, str]
    """scenario -> gold label, for the base's scenarios."""
    answers: dict[str, dict[str, str]]
    """case -> scenario -> outcome (less, more, equal, invalid, error)."""
    probs: dict[str, dict[str, dict[str, float]]]
    """case -> scenario -> label probabilities, where the base kept them (its soft tests can be planned)."""


def check_base_path(parser: argparse.ArgumentParser, path: Path) -> Path:
    """The --base to read: a run's summary.json stands for its folder; a --base that is not there, or a
    folder that is not a run, is a usage error."""
    if path.name == "summary.json" and path.is_file():
        path = path.parent
    if not path.exists():
        usage_error(parser, f"--base {path}: no such run folder or baseline file")
    if path.is_dir() and not (path / "summary.json").is_file():
        usage_error(parser, f"--base {path}: not a run folder (no summary.json); expected reports/<run-id>")
    return path


def dataset(value: str | None) -> Dataset:
    """The dataset's golds. A plan writes nothing: a response cache the project already has serves its
    checked datasets, and none is made where there is none (a temporary folder stands in)."""
    import tempfile

    from ..data import datasets
    from ..data.scenarios import DatasetError
    from ..rootdir import cache_dir

    with tempfile.TemporaryDirectory(prefix="mathcomp-plan-") as scratch:
        folder = cache_dir() if cache_dir().is_dir() else Path(scratch)
        try:
            loaded = datasets.resolve(value, None, folder)
        except DatasetError as exc:
            raise PlanError(str(exc).splitlines()[0]) from exc
    return Dataset(loaded.name, {s.id: s.label for s in loaded.scenarios})


def base(path: Path, dataset: Dataset) -> Base:
    """The base's answers per case, and the gold of each of its scenarios (a run folder's own records;
    for a baseline file, the dataset's, which must be the one it was made on)."""
    from ..baseline_file import reader
    from ..baseline_file.format import BaselineError
    from ..data.generated_draw import GENERATED_PREFIX

    try:
        found = reader.load(path)
    except BaselineError as exc:
        raise PlanError(str(exc)) from exc
    answers = {c: a for c, a in found.cases.items() if not c.startswith(GENERATED_PREFIX)}
    probs = {c: dict(p) for c, p in found.probs.items() if c in answers and p}
    golds = _run_golds(path) if path.is_dir() else dataset.golds
    unknown = [s for s in found.scenarios if s not in golds]
    if unknown:
        raise PlanError(
            f"{path}: {len(unknown)} of its scenarios are not in the dataset {dataset.name} "
            f"({', '.join(unknown[:3])}...); give the dataset it was made on with --dataset"
        )
    return Base(path, found.model, {s: golds[s] for s in found.scenarios}, answers, probs)


def _run_golds(run_dir: Path) -> dict[str, str]:
    """The gold of each scenario a run folder answered, from its results.jsonl read strictly (run_folder.py)."""
    from .. import run_folder

    try:
        found = run_folder.read(run_dir / run_folder.RESULTS, strict=True, needed=("scenario", "gold"))
    except run_folder.RunFolderError as exc:
        raise PlanError(str(exc)) from exc
    return {str(r["scenario"]): str(r["gold"]) for r in found.records}


def limits(args: argparse.Namespace, base: Base | None, framings: set[str]) -> dict[str, dict[str, float]]:
    """max_increase per framing and label: the thresholds file's, for the base's model (a fine-tune without
    a section of its own is held to its base's), or [default] and [framing.*] without a base."""
    from ..backends.models import ModelSpec, UnknownModelError, named, resolve
    from ..config.thresholds import ThresholdsError, load
    from ..paths import default_thresholds
    from ..rootdir import rootdir

    own = rootdir() / "thresholds.toml"  # as pytest's run finds it (plugin/options.thresholds_path)
    try:
        thresholds = load(args.thresholds or (own if own.is_file() else default_thresholds()), named)
        spec = ModelSpec("", "api", "(no model)", "")  # a model no [model.*] section names
        if base is not None:
            folder = base.source if base.source.is_dir() else base.source.parent
            with contextlib.suppress(
                UnknownModelError
            ):  # a model that no longer resolves: no section of its own
                spec = resolve(base.model, bases=(folder,))
        return {f: dict(thresholds.for_case(spec, f).max_increase) for f in framings}
    except ThresholdsError as exc:
        raise PlanError(str(exc)) from exc
