"""How often the baseline gate finds a fine-tune's change, from stored answers (no inference).

The gate's three tests against the base, as run/comparator.py runs them on this selection: DirErr(y) per
label (``hard``: scoring/paired.py ``compare``, one-sided exact McNemar), soft DirErr(y) per label
(``soft``: scoring/soft_paired.py ``soft_changes``, one-sided paired t) and, on a cue case, the
toward-cue rate of its cue label (``cue``: ``paired.cue_change``, answers moved to the cue's label from
the neutral case's). Each runs at level 0.05, and under ``--holm`` at 0.05 / m with m the tests the run
makes (here 4 cases x (3 + 3) + 3 cue tests = 27, run/comparator.py ``tests``).

For each fine-tune, case and label the true change is its change over the base on all 300 scenarios. The
detection rate at 30 and 100 scenarios is the share of SUBSETS random subsets of the scenarios (the same
subsets for every model and case, as one ``--limit`` run asks every case the same scenarios) in which the
test breaches; at 300 it is the one full set (0 or 1). A breach on a harmless fine-tune, or on the neutral
case of the cue-follower that keeps neutral put, is a false alarm. The smallest rise each test states it
sees (its ``power``, 80%) is kept as the median over the subsets.
"""

from __future__ import annotations

import functools
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mathcomp_tests.backends import models
from mathcomp_tests.config import thresholds
from mathcomp_tests.paths import ROOT
from mathcomp_tests.scoring import paired, soft_paired
from mathcomp_tests.types import LABELS, NEUTRAL, cue_label

SIZES = (30, 100, 300)
SUBSETS = 200
SEED = 20261125
ALPHA = 0.05
TESTS = ("hard", "soft", "cue")
"""DirErr, soft DirErr, toward-cue rate; ``any`` is any of them."""
LEVELS = ("plain", "holm")


@dataclass(frozen=True)
class Case:
    """One case's stored answers: scenario -> gold, label, label probabilities."""

    framing: str
    golds: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    probs: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def cue(self) -> str | None:
        return cue_label(self.framing)


def read(path: Path) -> dict[str, Case]:
    """answers/<model>.jsonl by case id, or SystemExit naming the line that is not a stored answer."""
    cases: dict[str, Case] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            case = cases.setdefault(row["case"], Case(row["case"].split("-end-")[0]))
            case.golds[row["scenario"]] = row["gold"]
            case.labels[row["scenario"]] = row["label"]
            case.probs[row["scenario"]] = {y: float(row["probs"][y]) for y in LABELS}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SystemExit(
                f"{path}, line {number}: expected a stored answer (case, scenario, gold, label, probs): {exc!r}"
            ) from None
    return cases


def subsets(ids: list[str], seed: int = SEED, count: int = SUBSETS) -> dict[int, list[list[str]]]:
    """``count`` random subsets of each size below the full set, and the full set once."""
    rng = random.Random(seed)
    return {n: [ids] if n >= len(ids) else [rng.sample(ids, n) for _ in range(count)] for n in SIZES}


@functools.cache
def max_increase(framing: str) -> dict[str, float]:
    """thresholds.toml's max_increase for the case, as a SmolLM2 fine-tune gated on its base gets it."""
    table = thresholds.load(ROOT / "thresholds.toml", models.named)
    return dict(table.for_case(models.resolve("smollm2-135m"), framing).max_increase)


def test_count(cases: list[Case]) -> int:
    """The m of --holm for this selection (run/comparator.py ``tests``, label scoring, neutral selected)."""
    cue_cases = sum(c.cue is not None for c in cases) if any(c.framing == NEUTRAL for c in cases) else 0
    return len(cases) * 2 * len(LABELS) + cue_cases


@dataclass(frozen=True)
class Outcome:
    """One subset of one case at one level: per test and label, whether it breached, and the rise the
    test states it sees (None: it says it cannot rise)."""

    breach: dict[str, dict[str, bool]]
    mde: dict[str, dict[str, float | None]]


def one_subset(
    base: Case, cand: Case, neutral: tuple[Case, Case] | None, ids: list[str], level: float
) -> Outcome:
    """The gate's tests on the items ``ids`` of one case: ``neutral`` (base, candidate) for the cue test."""
    limit = max_increase(cand.framing)
    golds = {s: base.golds[s] for s in ids}
    answered, before = {s: cand.labels[s] for s in ids}, {s: base.labels[s] for s in ids}
    tests = {
        "hard": paired.compare(golds, answered, before, limit, alpha=level).changes,
        "soft": soft_paired.soft_changes(golds, cand.probs, base.probs, limit, level),
    }
    if cand.cue is not None and neutral is not None:
        sides = ((neutral[0].labels, neutral[1].labels), (base.labels, cand.labels))
        tests["cue"] = {cand.cue: paired.cue_change(golds, sides[0], sides[1], cand.cue, limit[cand.cue], level)}
    breach = {t: {y: c.breach for y, c in changes.items()} for t, changes in tests.items()}
    mde = {t: {y: (c.power or {}).get("mde") for y, c in changes.items()} for t, changes in tests.items()}
    return Outcome(breach, mde)


def true_change(base: Case, cand: Case, neutral: tuple[Case, Case] | None) -> dict[str, dict[str, float]]:
    """Per label, the change over the base on every scenario: DirErr (hard), the mean probability (soft),
    and for the cue label of a cue case the toward-cue rate (cue); with the base's values."""
    out: dict[str, dict[str, float]] = {}
    for y in LABELS:
        ids = [s for s, g in base.golds.items() if g != y]
        hard = [(base.labels[s] == y, cand.labels[s] == y) for s in ids]
        out[y] = {
            "base_hard": _mean([b for b, _ in hard]),
            "hard": _mean([c for _, c in hard]) - _mean([b for b, _ in hard]),
            "base_soft": _mean([base.probs[s][y] for s in ids]),
            "soft": _mean([cand.probs[s][y] - base.probs[s][y] for s in ids]),
        }
    if cand.cue is not None and neutral is not None:
        cue, (base_n, cand_n) = cand.cue, neutral
        ids = list(base.golds)
        before = _mean([base.labels[s] == cue != base_n.labels[s] for s in ids])
        after = _mean([cand.labels[s] == cue != cand_n.labels[s] for s in ids])
        out[cue].update(base_cue=before, cue=after - before)
    return out


def _mean(values: list[Any]) -> float:
    return sum(float(v) for v in values) / len(values) if values else 0.0


def analyse_model(base: dict[str, Case], cand: dict[str, Case], drawn: dict[int, list[list[str]]]) -> dict[str, Any]:
    """Per case: the true changes; per size, level and test the detection rate of each label and of any
    label; the stated MDEs (median over subsets, plain level). Per size, level and test the share of
    subsets in which any case breached."""
    levels = {"plain": ALPHA, "holm": ALPHA / test_count(list(base.values()))}
    neutral_id = next((k for k, c in base.items() if c.framing == NEUTRAL), None)
    cases: dict[str, Any] = {}
    anywhere: dict[str, dict[str, dict[str, list[bool]]]] = {}
    for case_id, b in base.items():
        c = cand[case_id]
        neutral = (base[neutral_id], cand[neutral_id]) if neutral_id is not None else None
        detect: dict[str, Any] = {}
        mdes: dict[str, Any] = {}
        for n, chosen in drawn.items():
            size = str(n)
            detect[size], mdes[size] = {}, {}
            for level, alpha in levels.items():
                outcomes = [one_subset(b, c, neutral, ids, alpha) for ids in chosen]
                rates: dict[str, dict[str, float]] = {}
                for test in (*TESTS, "any"):
                    hits = {y: [_hit(o, test, y) for o in outcomes] for y in LABELS}
                    per_case = [any(h[i] for h in hits.values()) for i in range(len(outcomes))]
                    rates[test] = {**{y: _share(v) for y, v in hits.items()}, "any": _share(per_case)}
                    seen = anywhere.setdefault(size, {}).setdefault(level, {}).setdefault(test, [False] * len(per_case))
                    anywhere[size][level][test] = [a or h for a, h in zip(seen, per_case, strict=True)]
                detect[size][level] = rates
                if level == "plain":
                    mdes[size] = {
                        t: {y: _median([o.mde[t][y] for o in outcomes]) for y in outcomes[0].mde.get(t, {})}
                        for t in TESTS
                    }
        cases[case_id] = {
            "framing": c.framing,
            "cue": c.cue,
            "max_increase": max_increase(c.framing),
            "true": true_change(b, c, neutral),
            "detect": detect,
            "mde": mdes,
        }
    any_case = {
        n: {level: {t: _share(v) for t, v in tests.items()} for level, tests in by_level.items()}
        for n, by_level in anywhere.items()
    }
    return {"cases": cases, "any_case": any_case}


def _hit(outcome: Outcome, test: str, label: str) -> bool:
    if test == "any":
        return any(outcome.breach[t].get(label, False) for t in outcome.breach)
    return outcome.breach.get(test, {}).get(label, False)


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def _median(values: list[float | None]) -> float | None:
    """The (lower) median of the stated MDEs, "cannot rise" (None) counting as above any number: None
    when at least half of the subsets cannot rise."""
    if not values:
        return None
    middle = sorted(values, key=lambda v: math.inf if v is None else v)[(len(values) - 1) // 2]
    return None if middle is None else round(middle, 4)


def false_alarms(analysed: dict[str, Any]) -> dict[str, Any]:
    """Per test, its breaches where the change on all 300 scenarios (in the test's own measure) is at most
    max_increase: nothing the gate should fail. Pooled over every fine-tune, case and label: how many such
    tests there are, the mean share of subsets in which one breached, the largest, and where."""
    out: dict[str, Any] = {}
    for test in TESTS:
        cells = []
        for name, model in analysed.items():
            for case in model["cases"].values():
                for y, true in case["true"].items():
                    if test in true and true[test] <= case["max_increase"][y]:
                        cells.append((name, case["framing"], y, true[test], case["detect"]))
        by_size: dict[str, Any] = {}
        for size in (str(n) for n in SIZES):
            by_size[size] = {}
            for level in LEVELS:
                rates = [
                    (d[size][level][test][y], f"{name} {framing}: {y}, true {100 * t:+.1f} points")
                    for name, framing, y, t, d in cells
                ]
                top = max(rates, default=(0.0, None))
                by_size[size][level] = {
                    "mean": round(sum(r for r, _ in rates) / len(rates), 4) if rates else 0.0,
                    "max": top[0],
                    "where": top[1] if top[0] > 0 else None,
                }
        out[test] = {"tests": len(cells), "rates": by_size}
    return out


def hard_test() -> str:
    """Which exact McNemar ``paired.compare`` runs on this checkout, read off its p-value for 5 items
    newly answered y and none the other way (one-sided 1/32, two-sided 2/32)."""
    ids = [str(i) for i in range(5)]
    got = paired.compare(dict.fromkeys(ids, "less"), dict.fromkeys(ids, "more"), dict.fromkeys(ids, "less"),
                         dict.fromkeys(LABELS, 0.05)).changes["more"].p_value  # fmt: skip
    return "one-sided exact McNemar" if math.isclose(got, 1 / 32) else f"exact McNemar (p = {got:g} for 5 of 5)"


def analyse(answers: Path, names: list[str], base_name: str, log: Callable[[str], None]) -> dict[str, Any]:
    """Every stored fine-tune against the base; models not answered yet are listed as missing."""
    base = read(answers / f"{base_name}.jsonl")
    ids = sorted(next(iter(base.values())).golds, key=lambda s: (len(s), s))
    m = test_count(list(base.values()))
    out: dict[str, Any] = {
        "subsets": SUBSETS,
        "sizes": list(SIZES),
        "levels": {"plain": ALPHA, "holm": ALPHA / m, "tests": m},
        "hard_test": hard_test(),
        "base": {case_id: true_change(c, c, None) for case_id, c in base.items()},
        "models": {},
        "missing": [],
    }
    drawn = subsets(ids)
    for name in names:
        path = answers / f"{name}.jsonl"
        if not path.is_file():
            out["missing"].append(name)
            continue
        log(f"analysing {name}")
        out["models"][name] = analyse_model(base, read(path), drawn)
    out["false_alarms"] = false_alarms(out["models"])
    return out
