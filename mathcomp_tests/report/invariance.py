"""The cue-invariance section of the report: summary.json's ``invariance`` (run/invariance.py) drawn as
one table per format (all escaped)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..scoring import cue_pairs, rationale
from ..scoring.metrics import percent

HEAD = (("flip_rate", "flip"), ("toward_cue_rate", "toward cue"), ("lds", "LDS"), ("lao", "LAO"))
RATIONALE_HEAD = (("cue_echo", "cue echo"), ("phrased_with_cue", "phrased with cue"), ("drift", "drift"))


def _pct(entry: Any) -> str:
    if not isinstance(entry, Mapping) or entry.get("value") is None:
        return "n/a"
    interval = entry.get("interval")
    shown = percent(entry["value"])
    return shown + (f" ({100 * interval[0]:.1f} to {100 * interval[1]:.1f})" if interval else "")


def _verdict(case: Mapping[str, Any], gated: bool) -> str:
    """pass, FAIL (or over a ceiling that is not gated), or "no ceiling" where nothing holds the case."""
    if case["passed"]:
        return "pass" if case.get("ceilings") else "no ceiling"
    breached = "; ".join(case["breaches"])
    return (
        f"FAIL: {breached}" if gated else f"over its ceiling, not gated (run with --invariance): {breached}"
    )


def _row(cells: Sequence[str], breached: bool = False) -> str:
    style = ' style="background:#f8d7da"' if breached else ""
    return f"<tr{style}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"


def invariance_html(summary: Mapping[str, Any] | None) -> str:
    """One table per format: a row per cue case and half; EDR / ND of the neutral cases beneath."""
    if not summary or not (summary.get("cues") or summary.get("neutral")):
        return ""
    parts = [
        '<div class="mathcomp-summary mathcomp-invariance"><h2>Cue invariance (against the neutral framing)</h2>'
        "<p>Percentages with 95% scenario-bootstrap intervals. Truth: items whose gold label is the cue's; "
        "Flip: the others. Invalid and failed answers leave the pair (counted under left out).</p>"
    ]
    gated = bool(summary.get("gated"))
    formats = dict.fromkeys(c["format"] for c in (*summary.get("cues", []), *summary.get("neutral", [])))
    for fmt in formats:
        cues = [c for c in summary.get("cues", []) if c["format"] == fmt]
        extra = RATIONALE_HEAD if fmt in rationale.RATIONALE_FORMATS else ()
        head = [
            "case",
            "cue",
            "half",
            "pairs",
            "left out",
            *(t for _, t in HEAD),
            *(t for _, t in extra),
            "verdict",
        ]
        rows = []
        for case in cues:
            for half in cue_pairs.HALVES:
                part = case[half]
                left = part["excluded"]
                rows.append(
                    _row(
                        [
                            f"{case['case']} vs neutral" if half == "all" else "",
                            case["cue"] if half == "all" else "",
                            half,
                            str(part["n"]),
                            f"{left['invalid']} invalid, {left['error']} error",
                            *(_pct(part.get(k)) for k, _ in (*HEAD, *extra)),
                            _verdict(case, gated) if half == "all" else "",
                        ],
                        breached=half == "all" and not case["passed"],
                    )
                )
        parts.append(f'<p class="mathcomp-format"><b>Format {escape(fmt)}</b></p>')
        if rows:
            parts.append(
                "<table><tr>"
                + "".join(f"<th>{escape(h)}</th>" for h in head)
                + "</tr>"
                + "".join(rows)
                + "</table>"
            )
        neutral = [c for c in summary.get("neutral", []) if c["format"] == fmt]
        if neutral:
            n_rows = [
                _row(
                    [
                        c["case"],
                        str(c["n"]),
                        _pct(c["edr"]),
                        _pct(c["nd"]),
                        "n/a" if c["nd_gold"] is None else f"{100 * c['nd_gold']:.1f}%",
                        _verdict(c, gated),
                    ],
                    breached=not c["passed"],
                )
                for c in neutral
            ]
            parts.append(
                "<table><tr><th>neutral case</th><th>answers</th><th>EDR</th><th>ND</th><th>ND of the gold "
                "labels</th><th>verdict</th></tr>" + "".join(n_rows) + "</table>"
            )
    if not summary.get("drift_computed") and any(f in rationale.RATIONALE_FORMATS for f in formats):
        parts.append("<p>Explanation drift is computed under --invariance (it loads the embedding model).</p>")
    parts += [f"<p>{escape(note)}</p>" for note in summary.get("notes", [])]
    parts.append("</div>")
    return "".join(parts)
