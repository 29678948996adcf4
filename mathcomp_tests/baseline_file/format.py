"""The baseline file's vocabulary (format numbers, keys, answer letters), the value a baseline is checked
against (Fingerprint; test_generated's Draw is data/generated_draw.py's), and how the file shows a dataset,
a model path and label probabilities: what both reading (reader.py) and writing (writer.py) a baseline
need."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..backends.models import looks_like_path
from ..data.generated_draw import GENERATED_PREFIX
from ..scoring.precision import PROB_SCALE, thousandths

FORMAT = 4
READS = ("1", "2", "3", "4")
"""The formats this version reads."""
LETTERS = {"less": "l", "more": "m", "equal": "e", "invalid": "i", "error": "x"}
OUTCOME = {v: k for k, v in LETTERS.items()}
PROBS_SEP = " | "
"""Format 4: a case line's letters may be followed by this and the items' label probabilities."""
GENERATED_KEYS = ("generated-seed", "generated-sha256", "generated-scenarios")
HEADER_KEYS = (
    "format",
    "model",
    "revision",
    "dataset",
    "dataset-sha256",
    "prompt-set",
    "scenarios",
    *GENERATED_KEYS,
    "cases",
)
OPTIONAL_KEYS = ("revision", *GENERATED_KEYS, "cases")
"""`cases` (the number of case lines, so that a file cut short says so) is required from format 3."""


class BaselineError(ValueError):
    """A baseline that cannot be read or does not fit the run; the message says which file and what differs."""


@dataclass(frozen=True)
class Fingerprint:
    """What a run's answers depend on besides the model: a baseline must match it."""

    dataset: str
    dataset_sha256: str
    prompt_set: str
    scenarios: tuple[str, ...]
    cases: tuple[str, ...] = ()


def probs_text(values: Sequence[Mapping[str, float] | None]) -> str:
    """The items' label probabilities as a case line carries them: ``812,101,87`` per item (thousandths of
    less, more, equal), ``-`` for an item without them (an answer that failed)."""
    from ..types import LABELS

    return " ".join(
        "-" if p is None else ",".join(str(thousandths(p.get(y, 0.0))) for y in LABELS) for p in values
    )


SUM_SLACK = 1
"""How far an item's three thousandths may sum from 1000: each is rounded, so by at most 1.5 together."""


def parse_probs(text: str, scenarios: Sequence[str]) -> list[dict[str, float] | None]:
    """``probs_text``'s inverse for the items of ``scenarios``; ValueError naming the item and what is wrong
    (the caller names the file and line). Each item is a distribution: three thousandths, each 0..1000,
    summing to 1000 within rounding."""
    from ..types import LABELS

    fields = text.split()
    if len(fields) != len(scenarios):
        raise ValueError(f"{len(fields)} label probabilities for {len(scenarios)} scenarios")
    out: list[dict[str, float] | None] = []
    for n, (field, scenario) in enumerate(zip(fields, scenarios, strict=True), 1):
        if field == "-":
            out.append(None)
            continue
        parts = field.split(",")
        numbers = [int(p) for p in parts if p.isdigit()]
        if (
            len(parts) != len(LABELS)
            or len(numbers) != len(parts)
            or any(v > PROB_SCALE for v in numbers)
            or abs(sum(numbers) - PROB_SCALE) > SUM_SLACK
        ):
            raise ValueError(
                f"item {n} (scenario {scenario}): {field[:30]!r}; expected {len(LABELS)} thousandths "
                f"(less,more,equal), each 0 to {PROB_SCALE} and summing to {PROB_SCALE}, or - for an item "
                "without them"
            )
        out.append({y: v / PROB_SCALE for y, v in zip(LABELS, numbers, strict=True)})
    return out


def scored_by_labels(case_id: str) -> bool:
    """Whether a plain case of this id is answered by label probabilities under --scoring=logprob (its
    format places the label where it can be scored); a protocol's case may ask other things, so no."""
    from .. import formats

    base = case_id.removeprefix(GENERATED_PREFIX).split("-options-", 1)[0]
    if "-protocol-" in base:
        return False
    names = sorted(formats.FORMATS, key=len, reverse=True)
    found = next((name for name in names if base.endswith(f"-{name}")), None)
    return found is not None and formats.get(found).logprob_prefix is not None


RESTORE = "restore it from version control or rewrite it with --update-baseline from a complete run"
"""What a damaged or cut-short baseline file's message says to do."""


def sha256_of(path: Path) -> str:
    """The file's sha256, or `unreadable` (a dataset that is not one file)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def shown_dataset(dataset: str) -> str:
    """A dataset inside the project by its relative path: the file is committed, the checkout moves."""
    from ..paths import ROOT

    try:
        return str(Path(dataset).relative_to(ROOT))
    except ValueError:
        return dataset


def shown_model(model: str, folder: Path) -> str:
    """A local model directory relative to the baseline's folder when it lies inside it (the two are
    committed together), the bundled demo model as ``hf:fixtures/...``; anything else as recorded."""
    from ..paths import bundled

    path = Path(model[3:]) if model.startswith("hf:") else None
    if path is None or not path.is_absolute():
        return model
    for base, prefix in ((folder.resolve(), ""), (bundled().resolve(), "fixtures/")):
        if path.is_relative_to(base) and path != base:
            shown = prefix + path.relative_to(base).as_posix()
            return f"hf:{shown}" if looks_like_path(shown) else f"hf:./{shown}"
    return model
