"""The table of DirErr per case printed at the end of a pytest run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..types import LABELS


def write_table(tr: Any, model: str, cases: Sequence[dict[str, Any]], run_dir: object) -> None:
    """One row per case: DirErr per label, accuracy, invalid share, and FAIL where a ceiling broke."""
    tr.write_sep("=", f"MathComp directional error: {model}")
    tr.write_line(f"{'case':<40} {'less':>7} {'more':>7} {'equal':>7} {'acc':>7} {'invalid':>8}")
    for case in cases:
        d, sc = case["scores"]["dir_err"], case["scores"]
        cells = " ".join(f"{'n/a' if d[y] is None else f'{100 * d[y]:.1f}%':>7}" for y in LABELS)
        flag = "" if case["passed"] else "  FAIL"
        if (case.get("baseline") or {}).get("status") == "no baseline":
            flag += "  no baseline"
        tr.write_line(
            f"{case['case']:<40} {cells} {100 * sc['accuracy']:>6.1f}% {100 * sc['invalid_rate']:>7.1f}%{flag}"
        )
    tr.write_line(f"run folder: {run_dir}")
