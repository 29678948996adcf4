"""Reading a baseline: the file (its format is in baseline_file/__init__.py's docstring), or a finished run folder
(its results.jsonl and summary.json). A file cut short or damaged is named with its path and line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import run_folder, summary_format
from ..data.generated_draw import GENERATED_DIR, GENERATED_PREFIX, Draw
from .fit import Baseline
from .format import (
    GENERATED_KEYS,
    HEADER_KEYS,
    LETTERS,
    OPTIONAL_KEYS,
    OUTCOME,
    PROBS_SEP,
    READS,
    RESTORE,
    BaselineError,
    parse_probs,
    scored_by_labels,
)


def load(path: str | Path) -> Baseline:
    """A baseline file, or a run folder (its results.jsonl and summary.json)."""
    path = Path(path)
    if path.is_dir():
        return from_run_dir(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark, as some editors write, is no key
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
                found = parse_probs(probs_part, order)
            except ValueError as exc:
                raise BaselineError(f"{path}:{number}: case {case_id}: {exc}; {RESTORE}") from exc
            probs[case_id] = {s: p for s, p in zip(order, found, strict=True) if p is not None}
    _check_probs_kept(path, rows, probs)
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


def _check_probs_kept(path: Path, rows: Mapping[str, tuple[int, str]], probs: Mapping[str, object]) -> None:
    """A file that keeps label probabilities keeps them for every case scored by them: a case line of such
    a case without its `` | `` part lost its soft tests, and is damaged."""
    if not probs:
        return
    for case_id, (number, _) in rows.items():
        if case_id not in probs and scored_by_labels(case_id):
            raise BaselineError(
                f"{path}:{number}: case {case_id} has no label probabilities (no '{PROBS_SEP.strip()}' part), "
                f"though the file keeps them for its other cases scored by labels; {RESTORE}"
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
        if not (run_dir / run_folder.RESULTS).is_file():
            raise FileNotFoundError(2, "no such file", str(run_dir / run_folder.RESULTS))
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
    cases, probs = _outcomes(run_dir / run_folder.RESULTS, summary.get("scenario_ids"))
    generated = _summary_draw(summary.get("generated"))
    generated_results = run_dir / GENERATED_DIR / run_folder.RESULTS
    if generated is not None and generated_results.is_file():
        found, found_probs = _outcomes(generated_results, generated.scenarios)
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
    path: Path, scenario_ids: Sequence[str] | None
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, dict[str, float]]]]:
    """(case id -> scenario id -> outcome, case id -> scenario id -> label probabilities), from a results.jsonl
    read strictly (run_folder.py: each case over every one of ``scenario_ids``, when the summary lists them);
    a case keeps probabilities only when every item that was answered has them."""
    try:
        records = run_folder.read_answers(path, scenario_ids)
    except run_folder.RunFolderError as exc:
        raise BaselineError(f"baseline {exc}") from exc
    cases: dict[str, dict[str, str]] = {}
    probs: dict[str, dict[str, dict[str, float]]] = {}
    unscored: set[str] = set()
    for number, record in enumerate(records, start=1):
        try:
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
