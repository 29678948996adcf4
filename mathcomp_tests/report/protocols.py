"""The report's protocol comparison: DirErr per framing under each protocol, against plain on the same cases.

Each cell pools the confusion tables of the cases that ran under both the protocol and plain (same
framing, position, identity, format and option order), so that a protocol is only ever compared with
plain on the same items. A cue framing shows DirErr of its cue's label; a framing without a direction
(neutral, placebo) shows the largest DirErr over the three labels. Every text is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..scoring.metrics import dir_err_counts, percent
from ..types import LABELS, PLAIN, cue_label

Case = Mapping[str, Any]
_KEY = ("framing", "position", "identity", "identity_on", "format", "options")


def _pooled(cases: Sequence[Case], framing: str) -> float | None:
    """DirErr of the framing's cue label (or the largest of the three) over ``cases``' pooled tables."""
    if not cases:
        return None
    table: dict[str, dict[str, int]] = {}
    for case in cases:
        for gold, row in case["scores"]["confusion"].items():
            into = table.setdefault(gold, {})
            for outcome, count in row.items():
                into[outcome] = into.get(outcome, 0) + int(count)
    labels = [cue_label(framing)] if cue_label(framing) else list(LABELS)
    values = []
    for label in labels:
        hit, total = dir_err_counts(table, str(label))
        if total:
            values.append(hit / total)
    return max(values) if values else None


def _unread(cases: Sequence[Case]) -> float | None:
    """The share of the pooled items that were invalid or failed (they lower DirErr without being right)."""
    total = bad = 0
    for case in cases:
        for row in case["scores"]["confusion"].values():
            total += sum(int(v) for v in row.values())
            bad += int(row.get("invalid", 0)) + int(row.get("error", 0))
    return bad / total if total else None


def comparison(cases: Sequence[Case]) -> dict[str, Any]:
    """framing -> protocol -> {dir_err, plain (on the same cases), removed, cases}; and cost per protocol."""
    scored = [c for c in cases if c.get("scores") is not None]
    protocols = list(dict.fromkeys(c.get("protocol", PLAIN) for c in scored))
    framings = list(dict.fromkeys(c["framing"] for c in scored))
    plain = {tuple(c[k] for k in _KEY): c for c in scored if c.get("protocol", PLAIN) == PLAIN}
    cells: dict[str, dict[str, Any]] = {}
    for framing in framings:
        row: dict[str, Any] = {}
        for protocol in protocols:
            own = [c for c in scored if c["framing"] == framing and c.get("protocol", PLAIN) == protocol]
            matched = [c for c in own if tuple(c[k] for k in _KEY) in plain]
            value = _pooled(matched or own, framing)
            base = _pooled([plain[tuple(c[k] for k in _KEY)] for c in matched], framing) if matched else None
            row[protocol] = {
                "dir_err": value,
                "plain": base,
                "removed": None if value is None or base is None else base - value,
                "unread": _unread(matched or own),
                "cases": len(matched or own),
            }
        cells[framing] = row
    return {"protocols": protocols, "framings": framings, "cells": cells, "cost": _cost(scored, protocols)}


def _cost(cases: Sequence[Case], protocols: Sequence[str]) -> dict[str, dict[str, float]]:
    out = {}
    for protocol in protocols:
        own = [c for c in cases if c.get("protocol", PLAIN) == protocol]
        items = sum(int(c["scores"]["n"]) for c in own) or 1
        notes: dict[str, int] = {}
        for c in own:
            for kind, count in (c.get("protocol_notes") or {}).items():
                notes[kind] = notes.get(kind, 0) + int(count)
        out[protocol] = {
            "requests_per_item": sum(int(c["usage"].get("requests", 0)) for c in own) / items,
            "input_tokens_per_item": sum(int(c["usage"]["input_tokens"]) for c in own) / items,
            "output_tokens_per_item": sum(int(c["usage"]["output_tokens"]) for c in own) / items,
            **{f"notes: {k}": v / items for k, v in notes.items()},
        }
    return out


def _cell(cell: Mapping[str, Any], protocol: str) -> str:
    text = percent(cell["dir_err"])
    if protocol != PLAIN and cell["removed"] is not None:
        removed = cell["removed"]
        sign = "−" if removed > 0 else "+" if removed < 0 else "±"
        text += f" ({sign}{abs(100 * removed):.1f} pts vs plain)"
    if cell.get("unread"):
        text += f"; {percent(cell['unread'])} unread"  # a low DirErr from unreadable answers removes nothing
    return f"<td>{escape(text)}</td>"


REVEAL_COLUMNS = (
    ("read", "items read"),
    ("first_follows_flip", "turn 1 follows the Flip cue"),
    ("second_follows_truth", "turn 2 follows the Truth cue"),
    ("second_keeps_first", "turn 2 keeps turn 1"),
    ("first_matches_neutral", "turn 1 = neutral"),
    ("second_matches_neutral", "turn 2 = neutral"),
    ("all_three_same", "all three the same"),
)


def reveal_after_html(entries: Sequence[Mapping[str, Any]]) -> str:
    """Reveal-After's shares per case (position x identity x format), or "" when it did not run."""
    if not entries:
        return ""
    head = "".join(f"<th>{escape(title)}</th>" for _, title in REVEAL_COLUMNS)
    rows = []
    for e in entries:
        cells = "".join(
            f"<td>{escape(str(e[k]) + ' of ' + str(e['items']) if k == 'read' else percent(e[k]))}</td>"
            for k, _ in REVEAL_COLUMNS
        )
        verdict = "pass" if not e["breaches"] else "FAIL: " + ", ".join(e["breaches"])
        rows.append(f"<tr><td>{escape(str(e['case']))}</td>{cells}<td>{escape(verdict)}</td></tr>")
    return (
        '<div class="mathcomp-summary mathcomp-reveal-after"><h2>Reveal-After</h2>'
        "<p>Turn 1 under a cue naming a wrong label, turn 2 in the same conversation under the cue naming the "
        "gold label, both against the neutral answer; shares over the items whose three answers were read. "
        "A model that tracks content answers the same three times.</p>"
        f"<table><tr><th>case</th>{head}<th>verdict</th></tr>" + "".join(rows) + "</table></div>"
    )


def protocols_html(cases: Sequence[Case], summary: Mapping[str, Any] | None = None) -> str:
    """The comparison table (none when every case ran under plain alone), then Reveal-After's table."""
    reveal = reveal_after_html((summary or {}).get("reveal_after") or [])
    got = comparison(cases)
    protocols = got["protocols"]
    if protocols in ([], [PLAIN]):
        return reveal
    head = "".join(f"<th>{escape(p)}</th>" for p in protocols)
    rows = []
    for framing in got["framings"]:
        what = f"DirErr({cue_label(framing)})" if cue_label(framing) else "max DirErr"
        cells = "".join(_cell(got["cells"][framing][p], p) for p in protocols)
        rows.append(f"<tr><td>{escape(framing)}: {escape(what)}</td>{cells}</tr>")
    kinds = list(dict.fromkeys(k for p in protocols for k in got["cost"][p]))
    for kind in kinds:
        label = kind.replace("_", " ")
        if kind.startswith("notes: "):
            values = "".join(f"<td>{percent(got['cost'][p].get(kind, 0.0))}</td>" for p in protocols)
            label = f"items noted {kind[7:]}"
        else:
            values = "".join(f"<td>{got['cost'][p][kind]:.1f}</td>" for p in protocols)
        rows.append(f'<tr class="mathcomp-cost"><td>cost: {escape(label)}</td>{values}</tr>')
    return (
        '<div class="mathcomp-summary mathcomp-protocols"><h2>Mitigation protocols</h2>'
        "<p>DirErr of each framing's cue label (the largest DirErr where the framing names none), pooled over "
        "the cases run under both the protocol and plain; in brackets, how much the protocol removes "
        "relative to plain on those cases, and the share of answers that were unreadable or failed (they count in "
        "DirErr's denominator, so a protocol the model cannot follow shows a low DirErr without removing "
        "anything). Cost rows: requests and tokens per item, summed over turns.</p>"
        f"<table><tr><th>framing</th>{head}</tr>" + "".join(rows) + "</table></div>" + reveal
    )
