"""One run's answers, item by item, read from a run folder (results.jsonl and summary.json: each answer's
text, prompt and label probabilities) or a baseline file (letters, and probabilities from format 4), for
comparing two runs item by item (scoring/item_changes.py).

Every line must read: a run folder whose results.jsonl has a line cut short (the run was killed while
writing it) is damaged here, not trimmed, since a dropped answer would look like a changed selection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import run_folder, summary_format
from ..baseline_file import reader
from ..baseline_file.fit import Baseline
from ..baseline_file.format import BaselineError, sha256_of
from ..data.generated_draw import GENERATED_DIR, GENERATED_PREFIX, Draw
from ..paths import shipped
from ..scoring.item_changes import Answer, Selection
from . import results

RUN_FOLDER = "run folder"
BASELINE_FILE = "baseline file"
LETTERS_ONLY = "the baseline file keeps answers as letters: no prompt or answer text for it"


class SourceError(ValueError):
    """A path that is neither a finished run folder nor a baseline file (a usage error); names it."""


class DamagedError(ValueError):
    """A run folder or baseline file that cannot be read as the suite wrote it; names the file and line."""


@dataclass(frozen=True)
class AnswerSet:
    source: Path
    kind: str
    """RUN_FOLDER or BASELINE_FILE."""
    model: str
    selection: Selection
    answers: dict[str, dict[str, Answer]]
    """case id -> scenario id -> Answer (test_generated's cases as ``generated:<id>``)."""
    golds: dict[str, dict[str, str | None]]
    """case id -> scenario id -> gold label; empty where the source keeps none (a baseline file)."""
    summary: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """A run folder's summary.json (the gate's reading of each case); None for a baseline file."""

    @property
    def has_text(self) -> bool:
        return self.kind == RUN_FOLDER

    @property
    def has_probabilities(self) -> bool:
        return any(a.probs is not None for answers in self.answers.values() for a in answers.values())


def load(path: Path, name: str | None = None) -> AnswerSet:
    """A run folder or a baseline file; ``name`` is how selection messages call it (default: its path)."""
    if path.is_dir():
        return from_run_folder(path, name)
    if not path.exists():
        raise SourceError(f"{path}: no such run folder or baseline file")
    try:
        found = reader.load(path)
    except BaselineError as exc:
        raise DamagedError(str(exc)) from exc
    return from_baseline(found, name)


def from_run_folder(run_dir: Path, name: str | None = None) -> AnswerSet:
    summary = _summary(run_dir)
    records = read_strict(run_dir / results.RESULTS, summary.get("scenario_ids"))
    generated = run_dir / GENERATED_DIR / results.RESULTS
    extra = read_strict(generated) if generated.is_file() and summary.get("generated") else []
    return from_records(run_dir, summary, records, extra, name)


def from_records(
    source: Path,
    summary: Mapping[str, Any],
    records: Iterable[Mapping[str, Any]],
    generated: Iterable[Mapping[str, Any]] = (),
    name: str | None = None,
) -> AnswerSet:
    """A run's answers from its summary and records (test_generated's ``generated``, prefixed here); where
    a case answered a scenario more than once (--samples), the last answer stands, as the suite compares."""
    answers: dict[str, dict[str, Answer]] = {}
    golds: dict[str, dict[str, str | None]] = {}
    for prefix, chosen in (("", records), (GENERATED_PREFIX, generated)):
        for r in chosen:
            case, scenario = prefix + str(r["case"]), str(r["scenario"])
            answers.setdefault(case, {})[scenario] = Answer(
                reader.outcome(r), _probs(r.get("probs")), _text(r.get("raw")), _text(r.get("prompt"))
            )
            golds.setdefault(case, {})[scenario] = str(r["gold"])
    dataset = summary.get("dataset") or {}
    selection = Selection(
        name or str(source),
        str(dataset.get("name", "?")),
        str(dataset.get("sha256", "unknown")),
        str(summary.get("prompt_set")),
        tuple(str(s) for s in summary.get("scenario_ids") or ()),
        {case: tuple(found) for case, found in answers.items()},
        _draw(source, summary.get("generated"))
        if any(c.startswith(GENERATED_PREFIX) for c in answers)
        else None,
    )
    model = str(summary.get("model") or "?")
    return AnswerSet(source, RUN_FOLDER, model, selection, answers, golds, summary)


def _draw(source: Path, block: Any) -> Draw | None:
    """summary.json's ``generated`` block: test_generated's draw."""
    if block is None:
        return None
    try:
        return Draw(int(block["seed"]), str(block["sha256"]), tuple(map(str, block["scenario_ids"])))
    except (KeyError, TypeError, ValueError) as exc:
        raise DamagedError(
            f"{source / results.SUMMARY}: generated: {exc!r}; expected seed, sha256 and scenario_ids"
        ) from exc


def from_baseline(found: Baseline, name: str | None = None) -> AnswerSet:
    """A baseline's answers; its label probabilities where its format keeps them (``probabilities``, format
    4); the golds of its fixed cases from its dataset file when that file is here unchanged."""
    probabilities = getattr(found, "probabilities", None)
    answers: dict[str, dict[str, Answer]] = {}
    for case, outcomes in found.cases.items():
        probs = (probabilities(case) if callable(probabilities) else None) or {}
        answers[case] = {s: Answer(o, _probs(probs.get(s))) for s, o in outcomes.items()}
    selection = Selection(
        name or str(found.source),
        found.dataset,
        found.dataset_sha256,
        found.prompt_set,
        found.scenarios,
        {case: tuple(outcomes) for case, outcomes in found.cases.items()},
        found.generated,
    )
    return AnswerSet(found.source, BASELINE_FILE, found.model, selection, answers, _dataset_golds(found))


def _dataset_golds(found: Baseline) -> dict[str, dict[str, str | None]]:
    """Gold labels of the fixed cases from the dataset the baseline names, when it is here with the same
    sha256; {} otherwise (a generated case's scenarios are not in it)."""
    from ..data import scenarios

    path = Path(found.dataset)
    path = path if path.is_absolute() else shipped(path)
    if sha256_of(path) != found.dataset_sha256:
        return {}
    try:
        labels = {s.id: str(s.label) for s in scenarios.load(path)}
    except (ValueError, OSError):
        return {}
    return {
        case: {s: labels.get(s) for s in outcomes}
        for case, outcomes in found.cases.items()
        if not case.startswith(GENERATED_PREFIX)
    }


def _summary(run_dir: Path) -> dict[str, Any]:
    """summary.json of a finished run (summary_format.load: its version checked)."""
    try:
        return summary_format.load(run_dir)
    except summary_format.MissingSummary as exc:
        raise SourceError(str(exc)) from exc
    except summary_format.SummaryError as exc:
        raise DamagedError(str(exc)) from exc


def read_strict(path: Path, scenario_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every record of a results.jsonl, read strictly (run_folder.py): DamagedError naming the first line
    that is not a whole result record, or a case that answered other scenarios than ``scenario_ids`` (a
    diff of a run cut short would compare less than its cases)."""
    if not path.is_file():
        raise SourceError(f"{path.parent}: not a finished run folder (no {path.name})")
    try:
        return run_folder.read_answers(path, scenario_ids)
    except run_folder.RunFolderError as exc:
        raise DamagedError(f"{exc}; expected one result record per line") from exc


def _probs(value: Any) -> dict[str, float] | None:
    if not isinstance(value, Mapping):
        return None
    return {str(k): float(v) for k, v in value.items() if isinstance(v, (int, float))}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
