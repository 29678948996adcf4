"""Whether pytest narrowed the suite: the items the options select (the whole) against the items pytest
ran (after -k, -m, --lf, --sw, --deselect or node ids). A narrowed run says so wherever it gives its verdict
and never rewrites the rest of a baseline. Plain values in, summary.json's ``narrowed`` block out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

GATED = {"test_framing": "", "test_generated": "generated:"}
"""The gated tests, and how a baseline and the verdict name their cases."""
SHOWN = 20
"""Case ids listed in summary.json's ``left_out``; the rest are counted."""


def item_key(nodeid: str) -> tuple[str, str | None]:
    """(test, condition id) of a suite item's node id (``...::test_framing[<id>]``); the id is None for an
    item with no parameters."""
    test, _, rest = nodeid.rpartition("::")[2].partition("[")
    return test, rest[:-1] if rest.endswith("]") else None


def item_name(nodeid: str) -> str:
    """``test_framing[<id>]``: a suite item's name wherever the suite was collected from (no path)."""
    test, case = item_key(nodeid)
    return test if case is None else f"{test}[{case}]"


def case_name(test: str, condition_id: str) -> str:
    """How the verdict names an item: a gated case as the baseline does, any other as ``test[id]``."""
    return GATED[test] + condition_id if test in GATED else f"{test}[{condition_id}]"


def narrowed(
    whole: Sequence[tuple[str, str]], selected: Iterable[str], means: Sequence[str]
) -> dict[str, Any] | None:
    """summary.json's ``narrowed`` block when pytest left out any of ``whole`` (None: it selected it all).

    ``selected`` holds the node ids pytest selected, ``means`` how it was narrowed (``-k 'neutral'``)."""
    chosen = set(map(item_key, selected))
    left = [key for key in whole if key not in chosen]
    if not left:
        return None
    gated = [key for key in whole if key[0] in GATED]
    left_gated = [case_name(*key) for key in left if key[0] in GATED]
    return {
        "by": list(means) or ["the selection"],
        "cases_selected": len(gated) - len(left_gated),
        "cases_in_suite": len(gated),
        "left_out": left_gated[:SHOWN],
        "left_out_count": len(left_gated),
        "other_checks_left_out": len(left) - len(left_gated),
    }


def by_text(block: Mapping[str, Any]) -> str:
    """``-k 'neutral'`` or ``--lf and --deselect``: how a run was narrowed, for a sentence."""
    means = [str(m) for m in block.get("by") or []]
    return " and ".join(means) if means else "the selection"


def left_out_text(block: Mapping[str, Any], n: int) -> str:
    """The first ``n`` cases a narrowed run left out, and how many more (empty when it left out none)."""
    left = int(block.get("left_out_count") or 0)
    shown = ", ".join(str(c) for c in (block.get("left_out") or [])[:n])
    return shown + (f" and {left - n} more" if left > n else "")


def phrase(block: Mapping[str, Any] | None, by: bool = True) -> str:
    """``4 of 28 cases selected (narrowed by -k 'neutral')``, for the verdict; empty when not narrowed."""
    if not block:
        return ""
    text = f"{block.get('cases_selected')} of {block.get('cases_in_suite')} cases selected"
    others = int(block.get("other_checks_left_out") or 0)
    if others:
        text += f", {others} other {'checks' if others > 1 else 'check'} left out"
    return f"{text} (narrowed by {by_text(block)})" if by else text
