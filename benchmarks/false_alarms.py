"""How often the baseline comparison fires when nothing changed: ``.venv/bin/python -m benchmarks.false_alarms``.

Runs the suite once on a model with label-logprob scoring (the demo model by default: every case of the
default matrix, the bundled scenarios), so each item carries the model's probability for less, more and
equal. Then, many times over, it draws two independent answers per item from those probabilities (two
sampled runs of the same model: the null hypothesis holds by construction) and compares them exactly as
``--baseline`` does (paired test per case and label, max_increase from thresholds.toml, alpha 0.05), with
and without the Holm correction. A greedy run against itself is also counted: its answers are identical,
so it can never fire. Prints a table and writes ``reports/benchmarks/false_alarms.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mathcomp_tests.backends.models import named, resolve
from mathcomp_tests.config.thresholds import load
from mathcomp_tests.paths import ROOT
from mathcomp_tests.records.results import read_records
from mathcomp_tests.scoring import intervals, paired
from mathcomp_tests.settings import DEFAULT_MODEL
from mathcomp_tests.types import LABELS

OUT_DIR = ROOT / "reports" / "benchmarks"


def logprob_run(model: str, limit: int | None, workdir: Path) -> Path:
    """Run the suite with --scoring=logprob and return its run folder (cases may fail: we want the answers)."""
    reports = workdir / "reports"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--model={model}",
        "--scoring=logprob",
        f"--reports-dir={reports}",
        f"--cache-dir={workdir / 'cache'}",
    ]
    command += [f"--limit={limit}"] if limit else []
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"the suite run failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
    return (reports / "latest").resolve()


def by_case(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    cases: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if not isinstance(r.get("probs"), dict):
            raise SystemExit(
                f"{r['case']} scenario {r['scenario']}: no label probabilities (use --scoring=logprob)"
            )
        cases.setdefault(r["case"], []).append(r)
    return cases


def draw(probs: Mapping[str, float], rng: random.Random) -> str:
    weights = [max(0.0, float(probs[y])) for y in LABELS]
    return rng.choices(LABELS, weights=weights)[0] if sum(weights) > 0 else "invalid"


def simulate(
    cases: Mapping[str, Sequence[Mapping[str, Any]]],
    limits: Mapping[str, Mapping[str, float]],
    replicates: int,
    method: str,
    seed: int,
) -> dict[str, Any]:
    """Fire rates over ``replicates`` pairs of sampled runs."""
    rng = random.Random(seed)
    tests_per_run = len(cases) * len(LABELS)
    runs_firing = runs_firing_holm = tests_firing = tests_significant = 0
    for _ in range(replicates):
        fired, p_values, rises = 0, [], []
        for case_id, records in cases.items():
            golds = {str(r["scenario"]): str(r["gold"]) for r in records}
            base = {str(r["scenario"]): draw(r["probs"], rng) for r in records}
            cand = {str(r["scenario"]): draw(r["probs"], rng) for r in records}
            comparison = paired.compare(golds, cand, base, limits[case_id], method=method)
            for change in comparison.changes.values():
                fired += change.breach
                tests_significant += change.significant
                p_values.append(change.p_value)
                rises.append(change.difference is not None and change.difference > change.max_increase)
        tests_firing += fired
        runs_firing += fired > 0
        rejected = intervals.holm(p_values, paired.ALPHA)
        runs_firing_holm += any(r and big for r, big in zip(rejected, rises, strict=True))
    return {
        "method": method,
        "replicates": replicates,
        "tests_per_run": tests_per_run,
        "share_of_tests_firing": tests_firing / (replicates * tests_per_run),
        "share_of_tests_significant": tests_significant / (replicates * tests_per_run),
        "mean_tests_firing_per_run": tests_firing / replicates,
        "share_of_runs_with_any_false_alarm": runs_firing / replicates,
        "share_of_runs_with_any_false_alarm_holm": runs_firing_holm / replicates,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--limit", type=int, default=None, help="first N scenarios (default: all bundled)")
    parser.add_argument("--replicates", type=int, default=200, help="pairs of sampled runs (default: 200)")
    parser.add_argument(
        "--run-dir", type=Path, default=None, help="reuse a finished --scoring=logprob run folder"
    )
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run_dir or logprob_run(args.model, args.limit, Path(tmp))
        records = read_records(run_dir)
        summary = json.loads((run_dir / "summary.json").read_text())
    cases = by_case(records)
    thresholds = load(ROOT / "thresholds.toml", named)
    spec = resolve(summary["model"])
    framing = {c["case"]: c["framing"] for c in summary["cases"]}
    limits = {case_id: thresholds.for_case(spec, framing[case_id]).max_increase for case_id in cases}
    results = {
        "model": summary["model"],
        "scenarios": summary["scenarios"],
        "cases": len(cases),
        "max_increase": sorted({v for lim in limits.values() for v in lim.values()}),
        "alpha": paired.ALPHA,
        "greedy_against_itself": {"tests_firing": 0, "why": "identical answers: no discordant pairs, p = 1"},
        "sampled": [simulate(cases, limits, args.replicates, m, args.seed) for m in ("mcnemar", "bootstrap")],
        "seconds": round(time.perf_counter() - started, 1),
    }
    lines = [
        f"false alarms of --baseline when nothing changed: {results['model']}, {results['cases']} cases x 3 labels, "
        f"{results['scenarios']} scenarios, max_increase {results['max_increase']}, alpha {paired.ALPHA}",
        "| test | tests firing | tests significant (p < alpha) | runs with any false alarm | same, Holm |",
        "|---|---|---|---|---|",
    ]
    for s in results["sampled"]:
        lines.append(
            f"| {s['method']} | {100 * s['share_of_tests_firing']:.2f}% | {100 * s['share_of_tests_significant']:.2f}% "
            f"| {100 * s['share_of_runs_with_any_false_alarm']:.1f}% "
            f"| {100 * s['share_of_runs_with_any_false_alarm_holm']:.1f}% |"
        )
    lines.append(
        f"({args.replicates} pairs of sampled runs each; a greedy run against itself: 0 tests firing)"
    )
    text = "\n".join(lines)
    print(text)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "false_alarms.json").write_text(json.dumps(results, indent=2))
    (OUT_DIR / "false_alarms.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
