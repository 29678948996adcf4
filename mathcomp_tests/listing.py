"""Lists named in one line of a message: the first few items and how many more, how two lists differ, and a
count with its noun (``1 case``, ``2 cases``)."""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str) -> str:
    """``1 case``, ``2 cases``: ``n`` and ``noun``, plural (an added s) unless ``n`` is 1."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def few(values: Sequence[str], n: int = 3) -> str:
    """The first ``n`` of ``values``, and how many more: ``a, b, c and 4 more``."""
    shown = ", ".join(values[:n])
    return shown + (f" and {len(values) - n} more" if len(values) > n else "")


def sides(a: str, left: Sequence[str], b: str, right: Sequence[str]) -> str:
    """``300 in A, 280 in B; only in A: 7, 8, 9 and 17 more``: how many each side has, and what only one has."""
    only_a = [x for x in left if x not in set(right)]
    only_b = [x for x in right if x not in set(left)]
    parts = [f"{len(left)} in {a}, {len(right)} in {b}"]
    if only_a:
        parts.append(f"only in {a}: {few(only_a)}")
    if only_b:
        parts.append(f"only in {b}: {few(only_b)}")
    return "; ".join(parts)
