"""The precision label probabilities are kept and compared at: thousandths. A baseline file keeps them so
(baseline_file/format.py), and the soft test compares both sides so (scoring/soft_paired.py), so that a
copy of the base compares as a copy."""

from __future__ import annotations

PROB_SCALE = 1000
"""Probabilities are kept in thousandths (``812,101,87``: less, more, equal): enough for the paired test on
them, and a case of 300 items stays about 3 KB."""


def thousandths(probability: float) -> int:
    """A probability as the file keeps it: in thousandths, rounded."""
    return round(PROB_SCALE * float(probability))


def as_kept(probability: float) -> float:
    """A probability at the precision the file keeps: what a run is compared at, so that a copy of the base
    compares as a copy (its full-precision values against the file's would differ by the rounding)."""
    return thousandths(probability) / PROB_SCALE
