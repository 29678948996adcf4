"""A baseline: one earlier run's per-item answers, as a small plain-text file meant to be committed next to
thresholds.toml (like a snapshot), or read from a run folder. It must fit the run it is compared with.

The file, one `key: value` per line (lines starting with # are comments)::

    format: 4
    model: hf:fixtures/models/mathcomp-tiny
    revision: 3f2a...
    dataset: fixtures/scenarios.csv
    dataset-sha256: 9c1e...
    prompt-set: hf
    scenarios: 1 2 3 ...
    generated-seed: 0
    generated-sha256: 5d0b...
    generated-scenarios: gen-0-1 gen-0-2 ...
    cases: 2
    case neutral-begin-std-one-word: lmeelx...
    case generated:neutral-begin-std-one-word: emlle...
    case neutral-end-std-one-word: lme... | 812,101,87 120,790,90 ...

A case line has one letter per scenario, in the order of `scenarios` (a `generated:` case: of
`generated-scenarios`, test_generated's draw of --generated N scenarios from --hypothesis-seed): l less,
m more, e equal, i invalid (an unreadable answer), x error (no answer). `model` is the model that made it,
a local directory written relative to the file's folder when it lies inside it. Format 1 files (no
generated cases) and format 2 files (no `cases`, the number of case lines that tells a file cut short) are
read too. Format 4 adds, after `` | ``, each item's label probabilities when the run scored labels by
their probabilities (--scoring=logprob): thousandths of less, more, equal, ``-`` for an item without them.
The gate compares them with the run's (scoring/soft_paired.py). A format 3 file is a format 4 file whose
case lines carry none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import summary_format, userfile
from ..backends.models import ModelSpec, UnknownModelError, resolve
from .baseline_format import (
    FORMAT,
    GENERATED_DIR,
    GENERATED_KEYS,
    GENERATED_PREFIX,
    HEADER_KEYS,
    LETTERS,
    OPTIONAL_KEYS,
    OUTCOME,
    PROBS_SEP,
    READS,
    RESTORE,
    BaselineError,
    Draw,
    Fingerprint,
    draw,
    few,
    parse_probs,
    probs_text,
    sha256_of,
    shown_dataset,
    shown_model,
)

__all__ = [
    "FORMAT", "GENERATED_DIR", "GENERATED_KEYS", "GENERATED_PREFIX", "HEADER_KEYS", "LETTERS", "OPTIONAL_KEYS",
    "OUTCOME", "READS", "RESTORE", "Baseline", "BaselineError", "Draw", "Fingerprint", "draw", "from_run_dir",
    "case_line", "generated_lines", "load", "ordered", "outcome", "parse", "render", "sha256_of", "write",
]  # fmt: skip


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
    """case id -> scenario id -> outcome (less, more, equal, invalid, error); test_generated's cases
    under ``generated:<id>``."""
    generated: Draw | None = None
    """The generated scenarios its ``generated:`` cases answered; None when it has none."""
    probs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """case id -> scenario id -> label probabilities, for the cases whose every answered item has them
    (format 4, --scoring=logprob); items without them (failed answers) are left out."""

    def outcomes(self, case_id: str) -> dict[str, str] | None:
        return self.cases.get(case_id)

    def probabilities(self, case_id: str) -> dict[str, dict[str, float]] | None:
        """scenario id -> label probabilities of the case's items; None when the baseline kept none."""
        return self.probs.get(case_id)

    def model_spec(self) -> ModelSpec | None:
        """The model that made this baseline; a relative directory is looked up from the file's folder
        first. None when the name no longer resolves (an alias since removed)."""
        folder = self.source if self.source.is_dir() else self.source.parent
        name = self.model
        if name.startswith("hf:") and not Path(name[3:]).is_absolute() and (folder / name[3:]).is_dir():
            name = f"hf:{(folder / name[3:]).resolve()}"
        try:
            return replace(resolve(name, bases=(folder,)), given=self.model)
        except UnknownModelError:
            return None

    def check_generated_fits(self, run: Draw) -> None:
        """Raise BaselineError when this baseline's generated cases were asked on other scenarios than the
        run's test_generated draws (a baseline with no generated cases fits: they have no baseline)."""
        mine = self.generated
        if mine is None or mine == run:
            return
        if mine.options != run.options:
            detail = f"drawn with {mine.options} there, {run.options} here; run with its options"
        else:
            detail = f"the same options ({run.options}) now draw other scenarios (the generator changed)"
        raise BaselineError(
            f"baseline {self.source} does not fit this run's generated cases (test_generated): {detail}, "
            "or rewrite the baseline with --update-baseline"
        )

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
                detail += f"; only in the baseline: {few(only_base)}"
            if only_run:
                detail += f"; only in the run: {few(only_run)}"
            if not only_base and not only_run:
                detail += "; same ids in another order"
            problems.append(f"other scenarios ({detail}; check --limit and --dataset)")
        if not self.cases:
            problems.append(f"the baseline has no cases (a damaged or cut-short file: {RESTORE})")
        elif run.cases and not set(run.cases) & {c.removeprefix(GENERATED_PREFIX) for c in self.cases}:
            problems.append(
                f"another selection: none of the run's {len(run.cases)} cases ({few(list(run.cases))}) is in "
                f"the baseline, which has {few(list(self.cases))}"
            )
        if problems:
            raise BaselineError(f"baseline {self.source} does not fit this run: " + "; ".join(problems))


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
    """The file's baseline; a file that is cut short (fewer case lines than its `cases` says, none at all,
    or a last line without its line end that does not read) is named as damaged, with its path."""
    try:
        return _parse(path, text)
    except BaselineError as exc:
        if text and not text.endswith("\n"):
            raise BaselineError(
                f"baseline {path} is damaged: cut short (its last line has no line end: the write never "
                f"ended): {exc}; {RESTORE}"
            ) from exc
        raise


def _parse(path: Path, text: str) -> Baseline:
    header: dict[str, str] = {}
    rows: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = (
            stripped.rpartition(":") if stripped.startswith("case ") else stripped.partition(":")
        )
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
    missing = [k for k in HEADER_KEYS if k not in header and k not in OPTIONAL_KEYS]
    if missing:
        raise BaselineError(f"{path}: not a baseline file: missing {', '.join(missing)}")
    if header["format"] not in READS:
        raise BaselineError(
            f"{path}: baseline format {header['format']!r}; this version reads format "
            f"{', '.join(READS[:-1])} or {READS[-1]}"
        )
    if header["format"] not in ("1", "2") and "cases" not in header:
        raise BaselineError(f"{path}: not a baseline file: missing cases")
    _check_count(path, header.get("cases"), len(rows))
    scenarios = tuple(header["scenarios"].split())
    generated = _parse_draw(path, header)
    cases = {}
    probs: dict[str, dict[str, dict[str, float]]] = {}
    for case_id, (number, value) in rows.items():
        letters, sep, probs_part = value.partition(PROBS_SEP.strip())
        letters = letters.strip()
        order = scenarios
        if case_id.startswith(GENERATED_PREFIX):
            if generated is None:
                raise BaselineError(
                    f"{path}:{number}: case {case_id} is a generated case, but the file has no "
                    f"{', '.join(GENERATED_KEYS)}"
                )
            order = generated.scenarios
        if len(letters) != len(order):
            raise BaselineError(
                f"{path}:{number}: case {case_id} has {len(letters)} answers for {len(order)} scenarios"
            )
        bad = sorted(set(letters) - set(OUTCOME))
        if bad:
            raise BaselineError(
                f"{path}:{number}: case {case_id}: unknown answer letter(s) {''.join(bad)!r}; "
                f"expected {', '.join(f'{v} ({k})' for k, v in LETTERS.items())}"
            )
        cases[case_id] = {s: OUTCOME[ch] for s, ch in zip(order, letters, strict=True)}
        if sep:
            try:
                found = parse_probs(probs_part, len(order))
            except ValueError as exc:
                raise BaselineError(f"{path}:{number}: case {case_id}: {exc}") from exc
            probs[case_id] = {s: p for s, p in zip(order, found, strict=True) if p is not None}
    return Baseline(
        source=path,
        model=header["model"],
        revision=header.get("revision") or None,
        dataset=header["dataset"],
        dataset_sha256=header["dataset-sha256"],
        prompt_set=header["prompt-set"],
        scenarios=scenarios,
        cases=cases,
        generated=generated,
        probs=probs,
    )


def _check_count(path: Path, said: str | None, found: int) -> None:
    """A file with no case line, or another number than its `cases` line says, was cut short or damaged."""
    if said is not None and not said.isdigit():
        raise BaselineError(f"{path}: cases: {said!r}; expected the number of case lines")
    if found == 0:
        raise BaselineError(f"baseline {path} is damaged or cut short: it has no case lines; {RESTORE}")
    if said is not None and int(said) != found:
        raise BaselineError(
            f"baseline {path} is damaged or cut short: its header says {said} case lines, it has {found}; "
            f"{RESTORE}"
        )


def _parse_draw(path: Path, header: Mapping[str, str]) -> Draw | None:
    present = [k for k in GENERATED_KEYS if k in header]
    if not present:
        return None
    if len(present) < len(GENERATED_KEYS):
        missing = [k for k in GENERATED_KEYS if k not in header]
        raise BaselineError(f"{path}: {', '.join(present)} without {', '.join(missing)}")
    seed = header["generated-seed"]
    if not seed.lstrip("-").isdigit():
        raise BaselineError(f"{path}: generated-seed: {seed!r}; expected an integer (--hypothesis-seed)")
    return Draw(int(seed), header["generated-sha256"], tuple(header["generated-scenarios"].split()))


def outcome(record: Mapping[str, Any]) -> str:
    """less, more, equal, invalid or error: what one item of results.jsonl came to."""
    return str(record["label"]) if record["status"] == "ok" and record["label"] else str(record["status"])


def from_run_dir(run_dir: Path) -> Baseline:
    """The baseline a finished run folder makes (its scenarios in the order of its summary)."""
    try:
        summary = summary_format.load(run_dir)
        lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    except summary_format.MissingSummary as exc:
        raise BaselineError(f"baseline {exc}") from exc
    except summary_format.SummaryError as exc:
        raise BaselineError(f"baseline {run_dir}: {exc}") from exc
    except FileNotFoundError as exc:
        raise BaselineError(
            f"baseline {run_dir}: not a finished run folder ({exc.filename} is missing)"
        ) from exc
    except (OSError, ValueError) as exc:
        raise BaselineError(f"baseline {run_dir}: cannot be read: {exc}") from exc
    if summary_format.is_incomplete(summary):
        raise BaselineError(
            f"baseline {run_dir}: an incomplete run ({'; '.join(summary_format.incomplete_reasons(summary))}"
            "); use a complete run's folder or a baseline file"
        )
    cases, probs = _outcomes(run_dir / "results.jsonl", lines)
    generated = _summary_draw(summary.get("generated"))
    generated_results = run_dir / GENERATED_DIR / "results.jsonl"
    if generated is not None and generated_results.is_file():
        found, found_probs = _outcomes(
            generated_results, generated_results.read_text(encoding="utf-8").splitlines()
        )
        cases.update({GENERATED_PREFIX + case: answers for case, answers in found.items()})
        probs.update({GENERATED_PREFIX + case: p for case, p in found_probs.items()})
    dataset = summary.get("dataset", {})
    scenarios = summary.get("scenario_ids") or list(
        dict.fromkeys(s for c, a in cases.items() if not c.startswith(GENERATED_PREFIX) for s in a)
    )
    return Baseline(
        source=run_dir,
        model=str(summary.get("canonical") or summary.get("resolved") or summary.get("model")),
        revision=summary.get("revision"),
        dataset=str(dataset.get("name", "?")),
        dataset_sha256=str(dataset.get("sha256", "unknown")),
        prompt_set=str(summary.get("prompt_set")),
        scenarios=tuple(str(s) for s in scenarios),
        cases=cases,
        generated=generated if any(c.startswith(GENERATED_PREFIX) for c in cases) else None,
        probs=probs,
    )


def _outcomes(
    path: Path, lines: list[str]
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, dict[str, float]]]]:
    """(case id -> scenario id -> outcome, case id -> scenario id -> label probabilities), from the lines of
    a results.jsonl; a case keeps probabilities only when every item that was answered has them."""
    cases: dict[str, dict[str, str]] = {}
    probs: dict[str, dict[str, dict[str, float]]] = {}
    unscored: set[str] = set()
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
            case, scenario = record["case"], str(record["scenario"])
            cases.setdefault(case, {})[scenario] = outcome(record)
            found = record.get("probs")
            if isinstance(found, Mapping):
                probs.setdefault(case, {})[scenario] = {y: float(v) for y, v in found.items()}
            elif record["status"] != "error":
                unscored.add(case)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BaselineError(f"{path}:{number}: not a result line: {exc}") from exc
    return cases, {c: p for c, p in probs.items() if c not in unscored}


def _summary_draw(block: Any) -> Draw | None:
    """summary.json's `generated` block (None when the run had no generated cases, or predates it)."""
    if not isinstance(block, Mapping):
        return None
    return Draw(int(block["seed"]), str(block["sha256"]), tuple(str(s) for s in block["scenario_ids"]))


def case_line(baseline: Baseline, case_id: str) -> str | None:
    """``case <id>: <letters>`` for one of the baseline's cases (None: a generated case without its draw)."""
    order = baseline.scenarios
    if case_id.startswith(GENERATED_PREFIX):
        if baseline.generated is None:
            return None
        order = baseline.generated.scenarios
    answers = baseline.cases[case_id]
    line = f"case {case_id}: " + "".join(LETTERS[answers.get(s, "error")] for s in order)
    probs = baseline.probs.get(case_id)
    if probs:
        line += PROBS_SEP + probs_text([probs.get(s) for s in order])
    return line


def generated_lines(generated: Draw) -> list[str]:
    """The header lines that name test_generated's draw."""
    return [
        f"generated-seed: {generated.seed}",
        f"generated-sha256: {generated.sha256}",
        f"generated-scenarios: {' '.join(generated.scenarios)}",
    ]


def render(baseline: Baseline, folder: Path | None = None) -> str:
    """The file's text; ``folder`` is where it will be written (a local model is recorded relative to it)."""
    folder = folder if folder is not None else baseline.source.parent
    lines = [
        "# MathComp baseline: the per-item answers of one run, compared with later runs by --baseline.",
        "# One letter per scenario, in the order of `scenarios` (generated: cases, of `generated-scenarios`):",
        "# l less, m more, e equal, i invalid, x error; after ' | ', each item's label probabilities in",
        "# thousandths (less,more,equal) when the run scored them. Rewrite it with --update-baseline; commit it",
        "# next to thresholds.toml.",
        f"format: {FORMAT}",
        f"model: {shown_model(baseline.model, folder)}",
        f"revision: {baseline.revision or ''}",
        f"dataset: {shown_dataset(baseline.dataset)}",
        f"dataset-sha256: {baseline.dataset_sha256}",
        f"prompt-set: {baseline.prompt_set}",
        f"scenarios: {' '.join(baseline.scenarios)}",
    ]
    if baseline.generated is not None:
        lines += generated_lines(baseline.generated)
    written = [line for line in (case_line(baseline, c) for c in baseline.cases) if line is not None]
    lines.append(f"cases: {len(written)}")
    return "\n".join([*lines, *written]) + "\n"


def ordered(baseline: Baseline, order: Iterable[str]) -> Baseline:
    """``baseline`` with its cases in ``order`` (cases it does not name last)."""
    ranked = {c: i for i, c in enumerate(order)}
    cases = dict(sorted(baseline.cases.items(), key=lambda kv: ranked.get(kv[0], len(ranked))))
    return replace(baseline, cases=cases)


def write(baseline: Baseline, path: Path, order: Iterable[str] | None = None) -> Path:
    """Write ``baseline`` to ``path`` (cases in ``order`` when given), replacing the file atomically
    (userfile.replace_text: through a link, the file's mode kept); a write stopped halfway leaves the old file.
    Returns the file written."""
    if order is not None:
        baseline = ordered(baseline, order)
    return userfile.replace_text(path, render(baseline, userfile.target(path).parent))
