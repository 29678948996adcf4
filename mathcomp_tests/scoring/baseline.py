"""A baseline: one earlier run's per-item answers, as a small plain-text file meant to be committed next to
thresholds.toml (like a snapshot), or read from a run folder. It must fit the run it is compared with.

The file, one `key: value` per line (lines starting with # are comments)::

    format: 1
    model: hf:fixtures/models/mathcomp-tiny
    revision: 3f2a...
    dataset: fixtures/scenarios.csv
    dataset-sha256: 9c1e...
    prompt-set: hf
    scenarios: 1 2 3 ...
    case neutral-begin-std-one-word: lmeelx...

A case line has one letter per scenario, in the order of `scenarios`: l less, m more, e equal, i invalid
(an unreadable answer), x error (no answer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
LETTERS = {"less": "l", "more": "m", "equal": "e", "invalid": "i", "error": "x"}
OUTCOME = {v: k for k, v in LETTERS.items()}
HEADER_KEYS = ("format", "model", "revision", "dataset", "dataset-sha256", "prompt-set", "scenarios")


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


@dataclass(frozen=True)
class Baseline:
    source: Path
    model: str
    revision: str | None
    dataset: str
    dataset_sha256: str
    prompt_set: str
    scenarios: tuple[str, ...]
    cases: dict[str, dict[str, str]] = field(default_factory=dict)
    """case id -> scenario id -> outcome (less, more, equal, invalid, error)."""

    def outcomes(self, case_id: str) -> dict[str, str] | None:
        return self.cases.get(case_id)

    def check_fits(self, run: Fingerprint) -> None:
        """Raise BaselineError naming every way this baseline differs from the run."""
        problems = []
        if self.dataset_sha256 != run.dataset_sha256:
            problems.append(
                f"another dataset: the baseline's {self.dataset} has sha256 {self.dataset_sha256[:16]}..., "
                f"the run's {run.dataset} has {run.dataset_sha256[:16]}..."
            )
        if self.prompt_set != run.prompt_set:
            problems.append(f"another prompt set: baseline {self.prompt_set!r}, run {run.prompt_set!r}")
        if self.scenarios != run.scenarios:
            only_base = [s for s in self.scenarios if s not in set(run.scenarios)]
            only_run = [s for s in run.scenarios if s not in set(self.scenarios)]
            detail = f"{len(self.scenarios)} in the baseline, {len(run.scenarios)} in the run"
            if only_base:
                detail += f"; only in the baseline: {_few(only_base)}"
            if only_run:
                detail += f"; only in the run: {_few(only_run)}"
            if not only_base and not only_run:
                detail += "; same ids in another order"
            problems.append(f"other scenarios ({detail}; check --limit and --dataset)")
        if run.cases and not set(run.cases) & set(self.cases):
            problems.append(
                f"another selection: none of the run's {len(run.cases)} cases ({_few(list(run.cases))}) is in "
                f"the baseline, which has {_few(list(self.cases))}"
            )
        if problems:
            raise BaselineError(f"baseline {self.source} does not fit this run: " + "; ".join(problems))


def _few(values: list[str], n: int = 3) -> str:
    shown = ", ".join(values[:n])
    return shown + (f" and {len(values) - n} more" if len(values) > n else "")


def sha256_of(path: Path) -> str:
    """The file's sha256, or `unreadable` (a dataset that is not one file)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def load(path: str | Path) -> Baseline:
    """A baseline file, or a run folder (its results.jsonl and summary.json)."""
    path = Path(path)
    if path.is_dir():
        return from_run_dir(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise BaselineError(f"baseline {path}: no such file or run folder") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"baseline {path}: cannot be read: {exc}") from exc
    return parse(path, text)


def parse(path: Path, text: str) -> Baseline:
    header: dict[str, str] = {}
    rows: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            raise BaselineError(f"{path}:{number}: expected `key: value`, got {stripped[:60]!r}")
        key, value = key.strip(), value.strip()
        if key.startswith("case "):
            case_id = key[5:].strip()
            if case_id in rows:
                raise BaselineError(f"{path}:{number}: case {case_id} appears twice")
            rows[case_id] = (number, value)
        elif key in HEADER_KEYS:
            header[key] = value
        else:
            raise BaselineError(
                f"{path}:{number}: unknown key {key!r}; expected {', '.join(HEADER_KEYS)} or case <id>"
            )
    missing = [k for k in HEADER_KEYS if k not in header and k != "revision"]
    if missing:
        raise BaselineError(f"{path}: not a baseline file: missing {', '.join(missing)}")
    if header["format"] != str(FORMAT):
        raise BaselineError(
            f"{path}: baseline format {header['format']!r}; this version reads format {FORMAT}"
        )
    scenarios = tuple(header["scenarios"].split())
    cases = {}
    for case_id, (number, letters) in rows.items():
        if len(letters) != len(scenarios):
            raise BaselineError(
                f"{path}:{number}: case {case_id} has {len(letters)} answers for {len(scenarios)} scenarios"
            )
        bad = sorted(set(letters) - set(OUTCOME))
        if bad:
            raise BaselineError(
                f"{path}:{number}: case {case_id}: unknown answer letter(s) {''.join(bad)!r}; "
                f"expected {', '.join(f'{v} ({k})' for k, v in LETTERS.items())}"
            )
        cases[case_id] = {s: OUTCOME[ch] for s, ch in zip(scenarios, letters, strict=True)}
    return Baseline(
        source=path,
        model=header["model"],
        revision=header.get("revision") or None,
        dataset=header["dataset"],
        dataset_sha256=header["dataset-sha256"],
        prompt_set=header["prompt-set"],
        scenarios=scenarios,
        cases=cases,
    )


def outcome(record: Mapping[str, Any]) -> str:
    """less, more, equal, invalid or error: what one item of results.jsonl came to."""
    return str(record["label"]) if record["status"] == "ok" and record["label"] else str(record["status"])


def from_run_dir(run_dir: Path) -> Baseline:
    """The baseline a finished run folder makes (its scenarios in the order of its summary)."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise BaselineError(
            f"baseline {run_dir}: not a finished run folder ({exc.filename} is missing)"
        ) from exc
    except (OSError, ValueError) as exc:
        raise BaselineError(f"baseline {run_dir}: cannot be read: {exc}") from exc
    cases: dict[str, dict[str, str]] = {}
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
            cases.setdefault(record["case"], {})[str(record["scenario"])] = outcome(record)
        except (ValueError, KeyError, TypeError) as exc:
            raise BaselineError(f"{run_dir / 'results.jsonl'}:{number}: not a result line: {exc}") from exc
    dataset = summary.get("dataset", {})
    scenarios = summary.get("scenario_ids") or list(dict.fromkeys(s for c in cases.values() for s in c))
    return Baseline(
        source=run_dir,
        model=str(summary.get("resolved") or summary.get("model")),
        revision=summary.get("revision"),
        dataset=str(dataset.get("name", "?")),
        dataset_sha256=str(dataset.get("sha256", "unknown")),
        prompt_set=str(summary.get("prompt_set")),
        scenarios=tuple(str(s) for s in scenarios),
        cases=cases,
    )


def _shown(dataset: str) -> str:
    """A dataset inside the project by its relative path: the file is committed, the checkout moves."""
    from ..paths import ROOT

    try:
        return str(Path(dataset).relative_to(ROOT))
    except ValueError:
        return dataset


def render(baseline: Baseline) -> str:
    lines = [
        "# MathComp baseline: the per-item answers of one run, compared with later runs by --baseline.",
        "# One letter per scenario, in the order of `scenarios`: l less, m more, e equal, i invalid, x error.",
        "# Rewrite it with --update-baseline; commit it next to thresholds.toml.",
        f"format: {FORMAT}",
        f"model: {baseline.model}",
        f"revision: {baseline.revision or ''}",
        f"dataset: {_shown(baseline.dataset)}",
        f"dataset-sha256: {baseline.dataset_sha256}",
        f"prompt-set: {baseline.prompt_set}",
        f"scenarios: {' '.join(baseline.scenarios)}",
    ]
    for case_id, answers in baseline.cases.items():
        letters = "".join(LETTERS[answers.get(s, "error")] for s in baseline.scenarios)
        lines.append(f"case {case_id}: {letters}")
    return "\n".join(lines) + "\n"


def write(baseline: Baseline, path: Path, order: Iterable[str] | None = None) -> Path:
    """Write ``baseline`` to ``path`` (cases in ``order`` when given), replacing the file atomically."""
    if order is not None:
        ranked = {c: i for i, c in enumerate(order)}
        cases = dict(sorted(baseline.cases.items(), key=lambda kv: ranked.get(kv[0], len(ranked))))
        baseline = Baseline(**{**baseline.__dict__, "cases": cases})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(render(baseline), encoding="utf-8")
    tmp.replace(path)
    return path
