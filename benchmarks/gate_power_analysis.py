"""How often the baseline gate finds a fine-tune's change, from stored answers (no inference).

For each fine-tune, case and label y, the true change is its change over the base on all 300 scenarios:
DirErr(y) (hard) and the mean probability of y over items whose gold is not y (soft). The detection rate
at 30 and 100 scenarios is the share of SUBSETS random subsets of the scenarios (the same subsets for
every model and case, as one ``--limit`` run asks every case the same scenarios) in which the gate's test
breaches; at 300 it is the one full set (0 or 1). The hard test is scoring/paired.py ``compare`` and the
soft test scoring/soft_paired.py ``soft_changes``, each at level 0.05 and at 0.05 / 12 (``--holm`` over
4 cases x 3 labels: each test at alpha / m). A breach on a harmless fine-tune, or on the neutral case of
the cue-follower that keeps neutral put, is a false alarm.
"""

from __future__ import annotations

import functools
import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from mathcomp_tests.backends import models
from mathcomp_tests.paths import ROOT
from mathcomp_tests.scoring import paired, thresholds
from mathcomp_tests.types import LABELS, cue_label

SIZES = (30, 100, 300)
SUBSETS = 200
SEED = 20261125
ALPHA = 0.05
TESTS = ("hard", "soft", "either")
LEVELS = ("plain", "holm")


@functools.cache
def _optional(name: str) -> ModuleType | None:
    """A scoring module that may not be on this checkout yet (soft_paired, power): None when missing."""
    import importlib

    try:
        return importlib.import_module(f"mathcomp_tests.scoring.{name}")
    except ImportError:
        return None


@dataclass(frozen=True)
class Case:
    """One case's stored answers: scenario -> gold, label, label probabilities."""

    golds: dict[str, str]
    labels: dict[str, str]
    probs: dict[str, dict[str, float]]


def read(path: Path) -> dict[str, Case]:
    """answers/<model>.jsonl by case, or SystemExit naming the line that is not a stored answer."""
    cases: dict[str, Case] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            row = json.loads(line)
            case = cases.setdefault(row["case"], Case({}, {}, {}))
            case.golds[row["scenario"]] = row["gold"]
            case.labels[row["scenario"]] = row["label"]
            case.probs[row["scenario"]] = {y: float(row["probs"][y]) for y in LABELS}
        except (ValueError, KeyError, TypeError) as exc:
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
    table = thresholds.load(ROOT / "thresholds.toml")
    return dict(table.for_case(models.resolve("smollm2-135m"), framing).max_increase)


@dataclass(frozen=True)
class Outcome:
    """One subset of one case: which tests breached, per label and level; the hard test's MDE."""

    breach: dict[str, dict[str, dict[str, bool]]]
    """level -> test -> label -> breached."""
    mde: dict[str, float | None]
    """label -> the hard test's stated MDE at the plain level (None: cannot rise, or no power module)."""


def one_subset(
    base: Case, cand: Case, ids: list[str], limit: Mapping[str, float], levels: Mapping[str, float]
) -> Outcome:
    """Run the gate's tests on the items ``ids`` of one case, at each level."""
    soft_paired, power = _optional("soft_paired"), _optional("power")
    golds = {s: base.golds[s] for s in ids}
    breach: dict[str, dict[str, dict[str, bool]]] = {}
    mde: dict[str, float | None] = {y: None for y in LABELS}
    for name, level in levels.items():
        answered, before = {s: cand.labels[s] for s in ids}, {s: base.labels[s] for s in ids}
        hard = paired.compare(golds, answered, before, limit, alpha=level)
        soft = (
            soft_paired.soft_changes(golds, cand.probs, base.probs, limit, level) if soft_paired is not None else None
        )
        got: dict[str, dict[str, bool]] = {
            "hard": {y: hard.changes[y].breach for y in LABELS},
            "soft": {y: bool(soft and soft[y].breach) for y in LABELS},
        }
        got["either"] = {y: got["hard"][y] or got["soft"][y] for y in LABELS}
        breach[name] = got
        if name == "plain" and power is not None:
            for y, c in hard.changes.items():
                if c.pairs:
                    hits = round((c.baseline or 0.0) * c.pairs)
                    stated = power.rise_power(c.pairs, hits, limit[y], level, away=min(c.fell, hits))
                    mde[y] = stated.mde
    return Outcome(breach, mde)


def hard_test() -> str:
    """Which exact McNemar ``paired.compare`` runs on this checkout, read off its p-value for 5 items
    newly answered y and none the other way (one-sided 1/32, two-sided 2/32)."""
    ids = [str(i) for i in range(5)]
    got = paired.compare(dict.fromkeys(ids, "less"), dict.fromkeys(ids, "more"), dict.fromkeys(ids, "less"),
                         dict.fromkeys(LABELS, 0.05)).changes["more"].p_value  # fmt: skip
    return "one-sided exact McNemar" if math.isclose(got, 1 / 32) else f"exact McNemar (p = {got:g} for 5 of 5)"


def true_change(base: Case, cand: Case) -> dict[str, dict[str, float]]:
    """Per label, the change over the base on every scenario: hard (DirErr) and soft (mean probability)."""
    out: dict[str, dict[str, float]] = {}
    for y in LABELS:
        ids = [s for s, g in base.golds.items() if g != y]
        out[y] = {
            "base_hard": _mean([base.labels[s] == y for s in ids]),
            "hard": _mean([cand.labels[s] == y for s in ids]) - _mean([base.labels[s] == y for s in ids]),
            "base_soft": _mean([base.probs[s][y] for s in ids]),
            "soft": _mean([cand.probs[s][y] - base.probs[s][y] for s in ids]),
        }
    return out


def _mean(values: list[Any]) -> float:
    return sum(float(v) for v in values) / len(values) if values else 0.0


def analyse_model(
    base: dict[str, Case], cand: dict[str, Case], drawn: dict[int, list[list[str]]]
) -> dict[str, Any]:
    """Per case: the true changes, and per size, level and test the detection rate of each label and of
    any label ("any"); per size, level and test the share of subsets where any case breached."""
    cases = {}
    levels = {"plain": ALPHA, "holm": ALPHA / (len(base) * len(LABELS))}
    anywhere: dict[int, dict[str, dict[str, list[bool]]]] = {}
    for case_id, b in base.items():
        framing = case_id.split("-end-")[0]
        limit = max_increase(framing)
        rates: dict[str, Any] = {}
        mdes: dict[str, dict[str, float | None]] = {}
        for n, chosen in drawn.items():
            outcomes = [one_subset(b, cand[case_id], ids, limit, levels) for ids in chosen]
            rates[str(n)] = {
                level: {
                    test: {
                        **{y: _share([o.breach[level][test][y] for o in outcomes]) for y in LABELS},
                        "any": _share([any(o.breach[level][test].values()) for o in outcomes]),
                    }
                    for test in TESTS
                }
                for level in LEVELS
            }
            mdes[str(n)] = {y: _median([o.mde[y] for o in outcomes]) for y in LABELS}
            for level in LEVELS:
                for test in TESTS:
                    hits = [any(o.breach[level][test].values()) for o in outcomes]
                    seen = anywhere.setdefault(n, {}).setdefault(level, {}).setdefault(test, [False] * len(hits))
                    anywhere[n][level][test] = [a or h for a, h in zip(seen, hits, strict=True)]
        cases[case_id] = {
            "framing": framing,
            "cue": cue_label(framing),
            "max_increase": limit,
            "true": true_change(b, cand[case_id]),
            "detect": rates,
            "mde_hard": mdes,
        }
    any_case = {
        str(n): {level: {test: _share(v) for test, v in tests.items()} for level, tests in by_level.items()}
        for n, by_level in anywhere.items()
    }
    return {"cases": cases, "any_case": any_case}


def _share(flags: list[bool]) -> float:
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def _median(values: list[float | None]) -> float | None:
    """The (lower) median of the stated MDEs, "cannot rise" (None) counting as above any number: None
    when at least half of the subsets cannot rise."""
    if not values:
        return None
    return sorted(values, key=lambda v: math.inf if v is None else v)[(len(values) - 1) // 2]


def analyse(answers: Path, names: list[str], base_name: str, log: Callable[[str], None]) -> dict[str, Any]:
    """Every stored fine-tune against the base; models not answered yet are listed as missing."""
    base = read(answers / f"{base_name}.jsonl")
    ids = sorted(next(iter(base.values())).golds, key=lambda s: (len(s), s))
    drawn = subsets(ids)
    out: dict[str, Any] = {
        "subsets": SUBSETS,
        "sizes": list(SIZES),
        "levels": {"plain": ALPHA, "holm": ALPHA / (len(base) * len(LABELS))},
        "hard_test": hard_test(),
        "soft_test": _optional("soft_paired") is not None,
        "mde_from": "scoring/power.py rise_power" if _optional("power") is not None else None,
        "models": {},
        "missing": [],
    }
    for name in names:
        path = answers / f"{name}.jsonl"
        if not path.is_file():
            out["missing"].append(name)
            continue
        log(f"analysing {name}")
        out["models"][name] = analyse_model(base, read(path), drawn)
    return out
