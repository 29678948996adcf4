"""The baseline file written: its text (``render``, one ``case_line`` per case) and the file replaced
atomically (``write``). The format is described in baseline_file/__init__.py; reader.py reads it back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .. import userfile
from ..data.generated_draw import GENERATED_PREFIX, Draw
from .fit import Baseline
from .format import FORMAT, LETTERS, PROBS_SEP, probs_text, scored_by_labels, shown_dataset, shown_model


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


def without_probs_said(line: str, keeps: bool) -> str:
    """A case line of a file that keeps label probabilities (``keeps``), with `` | - - ...`` (no item has
    them) where its case is one scored by labels and the line carries none: a case whose probabilities were
    never kept says so, and a line that lost them reads as damaged (baseline_file/reader.py)."""
    head, sep, _ = line.partition(PROBS_SEP.strip())
    case_id, _, letters = head.removeprefix("case ").rpartition(":")
    if not keeps or sep or not scored_by_labels(case_id.strip()):
        return line
    return line + PROBS_SEP + " ".join("-" * len(letters.strip()))


def keeps_probs(*baselines: Baseline) -> bool:
    """Whether a file written from these keeps label probabilities (some case of one of them has them)."""
    return any(any(b.probs.values()) for b in baselines)


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
    keeps = keeps_probs(baseline)
    written = [
        without_probs_said(line, keeps) for line in (case_line(baseline, c) for c in baseline.cases) if line is not None
    ]
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
