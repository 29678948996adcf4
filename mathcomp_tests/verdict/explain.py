"""The message a failing case prints: every value against its ceiling, the baseline change, wrong items."""

from __future__ import annotations

from collections.abc import Sequence

from ..printable import printable
from ..scoring import metrics, own_paired
from ..scoring.paired import explanation as paired_explanation
from ..types import LABELS, Item
from .checks import NOTHING_READ, NOTHING_SCORED, breaches, gated
from .result import CaseResult

PROMPT_TAIL = 160
"""Characters of a prompt's end shown beside a wrong item."""


def explanation(result: CaseResult) -> str:
    """What a failing case prints: every value against its ceiling, then three wrong items."""
    scores, ceilings = result.scores, result.ceilings
    found = breaches(scores, ceilings)
    nothing = [b for b in found if b in (NOTHING_SCORED, NOTHING_READ)]
    over = [b for b in found if b not in nothing]
    rose = result.comparison.breaches if result.comparison is not None else []
    parts = (
        nothing
        + ([f"{', '.join(over)} above the ceiling"] if over else [])
        + ([f"{', '.join(r.removesuffix(' rise') for r in rose)} rose over the baseline"] if rose else [])
        + ([f"{len(result.extra_failures)} check(s) of the project's own failed"] if result.extra_failures else [])
    )
    lines = [f"{result.condition.id} on {printable(result.model)}: {'; '.join(parts) or 'nothing failed'}"]
    if NOTHING_SCORED in found:
        lines.append(
            f"  {NOTHING_SCORED}: all {scores.n} requests failed (see error_rate); a case that scored nothing "
            "never passes"
        )
    if NOTHING_READ in found:
        lines.append(
            f"  {NOTHING_READ}: none of the {scores.n} answers could be read (see invalid_rate); a case that "
            "read nothing never passes"
        )
    if ceilings.gate != "point":
        end = "lower" if ceilings.gate == "lower" else "upper"
        lines.append(f"  gate: the {end} end of the 95% interval is held to the ceiling")
    for y in LABELS:
        value = scores.dir_err[y]
        gate_value = gated(scores, y, ceilings.gate)
        hits, denominator = metrics.dir_err_counts(scores.confusion, y)
        shown = "n/a" if value is None else f"{value:.3f}"
        interval = (scores.dir_err_ci or {}).get(y)
        shown_ci = f"   95% CI [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else ""
        if ceilings.gate != "point" and gate_value is not None:
            shown += f", {ceilings.gate} end {gate_value:.3f}"
        mark = ">" if gate_value is not None and gate_value > ceilings.dir_err[y] else "<="
        lines.append(
            f"  DirErr({y:<5}) = {shown} {mark} {ceilings.dir_err[y]:.3f}{shown_ci}"
            f"   ({hits}/{denominator} items whose gold is not {y} answered {y})"
        )
    for name in ("invalid_rate", "error_rate"):
        value, ceiling = getattr(scores, name), getattr(ceilings, name)
        lines.append(f"  {name:<14} = {value:.3f} {'>' if value > ceiling else '<='} {ceiling:.3f}")
    if result.extra_failures:
        lines += [f"  {failure}" for failure in result.extra_failures]
        lines += own_standing(result)
    if result.comparison is not None:
        lines += paired_explanation(result.comparison, result.condition.id)
    elif result.baseline_status == "no baseline":
        lines.append(f"  no baseline: the baseline has no answers for {result.condition.id}")
    lines += _wrong_items(result.wrong_items(3))
    return "\n".join(lines)


def own_standing(result: CaseResult) -> list[str]:
    """Against a baseline, what each own check the base fails too did: its paired test, or (a check that
    cannot recompute its value) how far its value moved; why the case is new or known."""
    base = result.base_own_values or {}
    by = min(result.ceilings.max_increase.values())
    lines = []
    for name, value in result.own_values.items():
        if name in result.own_tests:
            lines.append(f"  {own_paired.text(result.own_tests[name])}")
        elif name in base:
            moved = "more" if value - base[name] > by else "not more"
            lines.append(
                f"  {name}: {base[name]:.3f} on the base (which fails it too), {value:.3f} now, "
                f"{value - base[name]:+.3f}: {moved} than max_increase {by:.3f} above it (untested: give the "
                "Check a measure= to test the rise)"
            )
    return lines


def _wrong_items(wrong: Sequence[Item]) -> list[str]:
    if not wrong:
        return []
    lines = ["three wrong items:" if len(wrong) == 3 else "wrong items:"]
    for item in wrong:
        prompt, prediction, response = item.prompt, item.prediction, item.response
        tail = prompt.text[-PROMPT_TAIL:].replace("\n", " ")
        lines.append(
            f"  scenario {prompt.scenario.id}: gold {prompt.scenario.label}, "
            f"read {prediction.label or prediction.status}, raw answer {response.text!r}"
        )
        lines.append(f"    prompt ends: ...{tail!r}")
    return lines
