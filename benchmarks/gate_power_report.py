"""The markdown page of benchmarks/gate_power_smollm2.py: detection rates against true change, hard and
soft side by side, false alarms, and what the numbers cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NEUTRAL_CASE = "neutral-end-std-one-word"


def _pct(rate: float) -> str:
    return f"{100 * rate:.0f}"


def _rates(detect: dict[str, Any], level: str, test: str, key: str) -> str:
    """Detection at each size as percentages, ``30 / 100 / 300``."""
    return " / ".join(_pct(detect[n][level][test][key]) for n in detect)


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def _mde(mdes: dict[str, Any], label: str) -> str:
    shown = [mdes[n][label] for n in mdes]
    return " / ".join("cannot" if m is None else f"{100 * m:.1f}" for m in shown)


def cue_rows(result: dict[str, Any]) -> list[str]:
    """One row per fine-tune trained on the cue and cue case: the cue label's true change and detection,
    and the MDE the hard test states (its median over the subsets)."""
    rows = [
        "| fine-tune | case: label | true change, hard / soft (points) | hard: 30 / 100 / 300 | soft: 30 / 100 / 300 "
        "| hard, --holm | soft, --holm | hard MDE stated (points) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, model in result["models"].items():
        if name.startswith("harmless"):
            continue
        for case in model["cases"].values():
            y = case["cue"]
            if y is None:
                continue
            true, detect = case["true"][y], case["detect"]
            rows.append(
                f"| {name} | {case['framing']}: {y} | {_points(true['hard'])} / {_points(true['soft'])} "
                f"| {_rates(detect, 'plain', 'hard', y)} | {_rates(detect, 'plain', 'soft', y)} "
                f"| {_rates(detect, 'holm', 'hard', y)} | {_rates(detect, 'holm', 'soft', y)} "
                f"| {_mde(case['mde_hard'], y) if result['mde_from'] else 'n/a'} |"
            )
    return rows


def _largest(model: dict[str, Any], measure: str, cases: list[str] | None = None) -> str:
    """The largest true rise of any label in any (of the given) case(s), with where it is."""
    found = [
        (c["true"][y][measure], c["framing"], y)
        for case_id, c in model["cases"].items()
        if cases is None or case_id in cases
        for y in c["true"]
    ]
    value, framing, y = max(found)
    return f"{_points(value)} ({framing}: {y})"


def false_alarm_rows(result: dict[str, Any]) -> list[str]:
    """Harmless fine-tunes (any case, any label) and the cue-follower's neutral case: how often any test
    breached."""
    rows = [
        "| fine-tune | where | largest true rise, hard | soft | hard: 30 / 100 / 300 | soft | either "
        "| either, --holm |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, model in result["models"].items():
        if name.startswith("harmless"):
            where, scope, rates = "any case", None, model["any_case"]
        elif name == "cue-only" and NEUTRAL_CASE in model["cases"]:
            where, scope = "neutral", [NEUTRAL_CASE]
            rates = {n: {lv: {t: v["any"] for t, v in tests.items()} for lv, tests in by.items()}
                     for n, by in model["cases"][NEUTRAL_CASE]["detect"].items()}  # fmt: skip
        else:
            continue
        rows.append(
            f"| {name} | {where} | {_largest(model, 'hard', scope)} | {_largest(model, 'soft', scope)} | "
            + " | ".join(
                " / ".join(_pct(rates[n][level][test]) for n in rates)
                for level, test in (("plain", "hard"), ("plain", "soft"), ("plain", "either"), ("holm", "either"))
            )
            + " |"
        )
    return rows


def case_rows(result: dict[str, Any]) -> list[str]:
    """Per fine-tune and case, how often any test (hard or soft, any label) breached, at 0.05."""
    first = next(iter(result["models"].values()), None)
    if first is None:
        return []
    framings = [c["framing"] for c in first["cases"].values()]
    rows = ["| fine-tune | " + " | ".join(framings) + " |", "|---|" + "---|" * len(framings)]
    for name, model in result["models"].items():
        cells = [_rates(c["detect"], "plain", "either", "any") for c in model["cases"].values()]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def cost_rows(result: dict[str, Any]) -> list[str]:
    rows = ["| step | wall (s) | CPU (s) | load before -> after |", "|---|---|---|---|"]
    for step, t in result["timings"].items():
        rows.append(f"| {step} | {t['wall_s']} | {t['cpu_s']} | {t['load_before'][0]} -> {t['load_after'][0]} |")
    return rows


def markdown(result: dict[str, Any]) -> str:
    levels = result["levels"]
    soft = "" if result["soft_test"] else " The soft test is not on this checkout: its columns read 0."
    checks = result["backend_check"]
    lines = [
        "# Power of the gate on SmolLM2",
        "",
        f"Detection rate (%) on {result['subsets']} random subsets of 30 and of 100 of the 300 bundled scenarios "
        f"and on all 300 (0 or 100); level {levels['plain']} and, under --holm, {levels['holm']:.4f} "
        f"(4 cases x 3 labels). True change: the fine-tune's change over the base on all 300. Hard test: "
        f"{result['hard_test']} (scoring/paired.py); soft test: scoring/soft_paired.py.{soft}",
        "",
        "## The cue, on the cue framings",
        "",
        *cue_rows(result),
        "",
        "## False alarms",
        "",
        *false_alarm_rows(result),
        "",
        "## Any test breaches, per case (level 0.05, either test, any label: 30 / 100 / 300)",
        "",
        *case_rows(result),
        "",
        "## Cost",
        "",
        f"Load average {result['load_before']} before, {result['load_after']} after; "
        f"{result['machine']['cores']} cores ({result['machine']['cpu']}). "
        "Largest difference in a probability against the hf backend on its check prompts: "
        + (f"{max(checks.values()):.1e}." if checks else "not checked."),
        "",
        *cost_rows(result),
    ]
    if result["missing"]:
        lines += ["", f"Not answered yet: {', '.join(result['missing'])}."]
    return "\n".join(lines) + "\n"


def _strongest(model: dict[str, Any]) -> dict[str, Any]:
    """The cue case whose cue label rose most (hard, then soft) over the base."""
    cued = [c for c in model["cases"].values() if c["cue"] is not None]
    return max(cued, key=lambda c: (c["true"][c["cue"]]["hard"], c["true"][c["cue"]]["soft"]))


def table_rows(result: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The row of `make bench`'s table (benchmarks/table.py): per fine-tune trained on the cue, the cue case
    it moved most, detected hard / soft at 30 / 100 / 300 scenarios; the harmless fine-tunes' false alarms."""
    found, alarms = [], []
    for name, model in result["models"].items():
        if name.startswith("harmless"):
            rates = model["any_case"]
            alarms.append(" / ".join(_pct(rates[n]["plain"]["either"]) for n in rates))
            continue
        case = _strongest(model)
        y, detect = case["cue"], case["detect"]
        found.append(
            f"{name} {case['framing']} {_points(case['true'][y]['hard'])} / {_points(case['true'][y]['soft'])} "
            f"points: {_rates(detect, 'plain', 'hard', y)} / {_rates(detect, 'plain', 'soft', y)}"
        )
    what = (
        "the baseline gate on SmolLM2 LoRA fine-tunes (neutral + direct-more/less/equal, one-word, label "
        "probabilities): each cue-trained fine-tune's largest cue rise (true change hard / soft), detected % by "
        "the hard / soft test at 30 / 100 / 300 scenarios; harmless seeds: % of runs with any breach"
    )
    value = "; ".join(found) + f"; false alarms {', '.join(alarms) or 'n/a'}"
    return [(what, "`python -m benchmarks.gate_power_smollm2`", value)]
