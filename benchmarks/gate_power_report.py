"""The markdown page of benchmarks/gate_power_smollm2.py: detection rates against true change, the gate's
tests side by side, false alarms, and what the numbers cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NEUTRAL_CASE = "neutral-end-std-one-word"
NAMES = {"hard": "DirErr", "soft": "soft DirErr", "cue": "toward-cue", "any": "any test"}


def _pct(rate: float) -> str:
    return f"{100 * rate:.0f}"


def _rates(detect: Mapping[str, Any], level: str, test: str, key: str) -> str:
    """Detection at each size as percentages, ``30 / 100 / 300``."""
    return " / ".join(_pct(detect[n][level][test][key]) for n in detect)


def _points(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.1f}"


def _mde(mdes: Mapping[str, Any], test: str, label: str) -> str:
    shown = [mdes[n][test].get(label, "n/a") for n in mdes]
    return " / ".join("cannot" if m is None else m if isinstance(m, str) else f"{100 * m:.1f}" for m in shown)


def cue_rows(result: Mapping[str, Any]) -> list[str]:
    """One row per fine-tune trained on the cue and cue case: the cue label's true change, how often each
    test and any test found it, and the rise each test states it sees (median over the subsets)."""
    rows = [
        "| fine-tune | case: label | true change (points): DirErr / soft / toward-cue | DirErr | soft DirErr "
        "| toward-cue | any test | any test, --holm | stated MDE (points): DirErr | soft DirErr |",
        "|---|---|---|---|---|---|---|---|---|---|",
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
                f"| {name} | {case['framing']}: {y} "
                f"| {_points(true['hard'])} / {_points(true['soft'])} / {_points(true.get('cue'))} | "
                + " | ".join(_rates(detect, "plain", t, y) for t in ("hard", "soft", "cue", "any"))
                + f" | {_rates(detect, 'holm', 'any', y)} | {_mde(case['mde'], 'hard', y)} "
                f"| {_mde(case['mde'], 'soft', y)} |"
            )
    return rows


def _largest(model: Mapping[str, Any], measure: str, cases: list[str] | None = None) -> str:
    """The largest true rise of any label in any (of the given) case(s), with where it is."""
    found = [
        (c["true"][y][measure], c["framing"], y)
        for case_id, c in model["cases"].items()
        if cases is None or case_id in cases
        for y in c["true"]
    ]
    value, framing, y = max(found)
    return f"{_points(value)} ({framing}: {y})"


def false_alarm_rows(result: Mapping[str, Any]) -> list[str]:
    """Per test, its breaches where the change on all 300 is at most max_increase (pooled over every
    fine-tune, case and label): the mean share of subsets, the largest and where."""
    rows = [
        "| test | tests with no true rise | mean % of runs breaching: 30 / 100 / 300 | largest (where) "
        "| mean, --holm | largest, --holm |",
        "|---|---|---|---|---|---|",
    ]
    for test, found in result["false_alarms"].items():
        rates = found["rates"]
        rows.append(
            f"| {NAMES[test]} | {found['tests']} | {' / '.join(_pct(rates[n]['plain']['mean']) for n in rates)} "
            f"| {_largest_rate(rates, 'plain')} | {' / '.join(_pct(rates[n]['holm']['mean']) for n in rates)} "
            f"| {_largest_rate(rates, 'holm')} |"
        )
    return rows


def _largest_rate(rates: Mapping[str, Any], level: str) -> str:
    """The largest share of runs breaching at any size, with the size and where."""
    size, top = max(((n, r[level]) for n, r in rates.items()), key=lambda nr: nr[1]["max"])
    return f"{_pct(top['max'])} at {size} ({top['where']})" if top["where"] else "0"


def uncued_rows(result: Mapping[str, Any]) -> list[str]:
    """Harmless fine-tunes (any case, any label) and the cue-follower's neutral case: how often a test
    breached, beside the largest true rise there."""
    rows = [
        "| fine-tune | where | largest true rise (points): DirErr | soft DirErr | DirErr | soft DirErr | toward-cue "
        "| any test | any test, --holm |",
        "|---|---|---|---|---|---|---|---|---|",
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
        shown = (("plain", "hard"), ("plain", "soft"), ("plain", "cue"), ("plain", "any"), ("holm", "any"))
        cells = [" / ".join(_pct(rates[n][level][test]) for n in rates) for level, test in shown]
        rows.append(
            f"| {name} | {where} | {_largest(model, 'hard', scope)} | {_largest(model, 'soft', scope)} | "
            + " | ".join(cells)
            + " |"
        )
    return rows


def case_rows(result: Mapping[str, Any]) -> list[str]:
    """Per fine-tune and case, how often any test (any label) breached, at level 0.05."""
    first = next(iter(result["models"].values()), None)
    if first is None:
        return []
    framings = [c["framing"] for c in first["cases"].values()]
    rows = ["| fine-tune | " + " | ".join(framings) + " |", "|---|" + "---|" * len(framings)]
    for name, model in result["models"].items():
        cells = [_rates(c["detect"], "plain", "any", "any") for c in model["cases"].values()]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def base_rows(result: Mapping[str, Any]) -> list[str]:
    """The base's DirErr and soft DirErr per case and label on all 300: where no rise can count."""
    rows = ["| case | DirErr less / more / equal | soft DirErr less / more / equal |", "|---|---|---|"]
    for case_id, labels in result["base"].items():
        hard = " / ".join(f"{v['base_hard']:.3f}" for v in labels.values())
        soft = " / ".join(f"{v['base_soft']:.3f}" for v in labels.values())
        rows.append(f"| {case_id.split('-end-')[0]} | {hard} | {soft} |")
    return rows


def cost_rows(result: Mapping[str, Any]) -> list[str]:
    rows = ["| step | wall (s) | CPU (s) | load before -> after |", "|---|---|---|---|"]
    for step, t in result["timings"].items():
        rows.append(f"| {step} | {t['wall_s']} | {t['cpu_s']} | {t['load_before'][0]} -> {t['load_after'][0]} |")
    return rows


def markdown(result: Mapping[str, Any]) -> str:
    levels = result["levels"]
    checks = result["backend_check"]
    wall = sum(t["wall_s"] for t in result["timings"].values())
    cpu = sum(t["cpu_s"] for t in result["timings"].values())
    lines = [
        "# Power of the gate on SmolLM2",
        "",
        f"Detection rate (%) on {result['subsets']} random subsets of 30 and of 100 of the 300 bundled scenarios "
        f"and on all 300 (0 or 100), as `30 / 100 / 300`; level {levels['plain']} and, under --holm, "
        f"{levels['holm']:.5f} (0.05 / {levels['tests']} tests). True change: the fine-tune's change over the "
        f"base on all 300. DirErr: {result['hard_test']} (scoring/paired.py); soft DirErr: paired t "
        "(scoring/soft_paired.py); toward-cue: the cue case's answers moved to the cue's label from neutral's, "
        "exact McNemar (paired.cue_change). Stated MDE: the median over the subsets of the rise each test says "
        "it sees with 80% power (`cannot`: it says no rise can count).",
        "",
        "## The cue, on the cue framings",
        "",
        *cue_rows(result),
        "",
        "## Fine-tunes that never saw a cue, and the cue-follower's neutral case",
        "",
        "How often any case (any label) breached, beside the largest true rise there: a breach where the "
        "answers truly rose is a detection, not a false alarm.",
        "",
        *uncued_rows(result),
        "",
        "## False alarms: breaches where nothing rose by more than max_increase on all 300",
        "",
        *false_alarm_rows(result),
        "",
        "## Any test breaches, per case (level 0.05, any label: 30 / 100 / 300)",
        "",
        *case_rows(result),
        "",
        "## The base on all 300",
        "",
        *base_rows(result),
        "",
        "## Cost",
        "",
        f"Load average {result['load_before']} before, {result['load_after']} after; "
        f"{result['machine']['cores']} cores ({result['machine']['cpu']}). All steps: {wall / 60:.0f} min of wall "
        f"time, {cpu / 60:.0f} min of CPU. Largest difference in a probability against the hf backend on its "
        "check prompts: " + (f"{max(checks.values()):.1e}." if checks else "not checked."),
        "",
        *cost_rows(result),
    ]
    if result["missing"]:
        lines += ["", f"Not answered yet: {', '.join(result['missing'])}."]
    return "\n".join(lines) + "\n"


def _strongest(model: Mapping[str, Any]) -> dict[str, Any]:
    """The cue case whose cue label rose most (hard, then soft) over the base."""
    cued = [c for c in model["cases"].values() if c["cue"] is not None]
    return max(cued, key=lambda c: (c["true"][c["cue"]]["hard"], c["true"][c["cue"]]["soft"]))


def table_rows(result: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The row of `make bench`'s table (benchmarks/table.py): per fine-tune trained on the cue, the cue case
    it moved most, detected by DirErr / soft DirErr at 30 / 100 / 300 scenarios; the harmless fine-tunes'
    false alarms (any test)."""
    found, alarms = [], []
    for name, model in result["models"].items():
        if name.startswith("harmless"):
            rates = model["any_case"]
            alarms.append(" / ".join(_pct(rates[n]["plain"]["any"]) for n in rates))
            continue
        case = _strongest(model)
        y, detect = case["cue"], case["detect"]
        found.append(
            f"{name} {case['framing']} {_points(case['true'][y]['hard'])} / {_points(case['true'][y]['soft'])} "
            f"points: {_rates(detect, 'plain', 'hard', y)} / {_rates(detect, 'plain', 'soft', y)}"
        )
    what = (
        "the baseline gate on SmolLM2 LoRA fine-tunes (neutral + direct-more/less/equal, one-word, label "
        "probabilities): each cue-trained fine-tune's largest cue rise (true change DirErr / soft), detected % by "
        "DirErr / soft DirErr at 30 / 100 / 300 scenarios; harmless seeds: % of runs with any breach"
    )
    value = "; ".join(found) + f"; false alarms {', '.join(alarms) or 'n/a'}"
    return [(what, "`python -m benchmarks.gate_power_smollm2`", value)]
