"""How often a project's own check fails as *new* when nothing changed: ``python -m benchmarks.own_check_alarms``.

The check is the project's own conftest.py (DirErr(y) under direct-y at most +0.10 over the neutral case).
The suite runs once on a model with label-logprob scoring (the demo model by default, which follows every
cue word: its direct cases fail the check), so each item carries the model's probability of each label.
Each seed then draws two independent answers per item from those probabilities (two sampled runs of the
same model: harmless by construction) as base and candidate. Where both fail the check, the case is new
under the old rule when the candidate's gap is more than max_increase above the base's, and under the paired
test (scoring/own_paired.py) when that rise is also significant. Prints a table and writes
``reports/benchmarks/own_check_alarms.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import write_json
from benchmarks.false_alarms import by_case, draw, logprob_run
from mathcomp_tests.records.results import read_records
from mathcomp_tests.scoring import metrics, own_paired, paired
from mathcomp_tests.scoring.own_paired import Side
from mathcomp_tests.settings import DEFAULT_MODEL

ALLOWED = 0.10
"""conftest.py's MAX_RISE_OVER_NEUTRAL."""
MAX_INCREASE = 0.05


def gap(label: str) -> own_paired.Measure:
    def measure(case: metrics.Scores, neutral: metrics.Scores) -> float | None:
        cued, plain = case.dir_err[label], neutral.dir_err[label]
        return None if cued is None or plain is None else cued - plain

    return measure


def sampled(records: Sequence[Mapping[str, Any]], rng: random.Random) -> dict[str, str]:
    return {str(r["scenario"]): draw(r["probs"], rng) for r in records}


def seed_alarms(cases: Mapping[str, Sequence[Mapping[str, Any]]], seed: int) -> dict[str, int]:
    """One pair of sampled runs: direct cases failing the check on both sides, and how many each rule
    calls new."""
    rng = random.Random(seed)
    base = {case: sampled(records, rng) for case, records in cases.items()}
    cand = {case: sampled(records, rng) for case, records in cases.items()}
    both = old = new = 0
    for case, records in cases.items():
        framing = str(records[0]["framing"])
        if not framing.startswith("direct-"):
            continue
        label = framing.removeprefix("direct-")
        neutral = case.replace(framing, "neutral", 1)
        golds = {str(r["scenario"]): str(r["gold"]) for r in records}
        test = own_paired.rise(
            f"{case} gap", gap(label), golds, Side(cand[case], cand[neutral]), Side(base[case], base[neutral]),
            MAX_INCREASE, paired.ALPHA,
        )  # fmt: skip
        if test is None or test["baseline"] <= ALLOWED or test["candidate"] <= ALLOWED:
            continue
        both += 1
        old += test["difference"] > MAX_INCREASE
        new += test["breach"]
    return {"seed": seed, "both_fail": both, "new_old_rule": old, "new_paired_test": new}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--limit", type=int, default=40, help="scenarios (default 40, as the report's runs)")
    parser.add_argument("--seeds", type=int, default=5, help="pairs of sampled runs (default 5)")
    parser.add_argument("--run-dir", type=Path, default=None, help="reuse a finished --scoring=logprob run folder")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run_dir or logprob_run(args.model, args.limit, Path(tmp))
        cases = by_case(read_records(run_dir))
        model = json.loads((run_dir / "summary.json").read_text())["model"]
    rows = [seed_alarms(cases, seed) for seed in range(args.seeds)]
    both = sum(r["both_fail"] for r in rows)
    results = {
        "model": model,
        "scenarios": args.limit,
        "seeds": rows,
        "checks_failing_on_both": both,
        "false_new_old_rule": sum(r["new_old_rule"] for r in rows),
        "false_new_paired_test": sum(r["new_paired_test"] for r in rows),
        "seconds": round(time.perf_counter() - started, 1),
    }
    lines = [
        f"own check (DirErr(y) under direct-y at most +{ALLOWED:.2f} over neutral) called new when nothing changed: "
        f"{model}, {args.limit} scenarios, two sampled runs per seed, max_increase {MAX_INCREASE}",
        "| seed | failing on both | new, old rule (value above max_increase) | new, paired test |",
        "|---|---|---|---|",
        *(f"| {r['seed']} | {r['both_fail']} | {r['new_old_rule']} | {r['new_paired_test']} |" for r in rows),
        f"| all | {both} | {results['false_new_old_rule']} | {results['false_new_paired_test']} |",
    ]
    text = "\n".join(lines)
    print(text)
    write_json("own_check_alarms", results).with_suffix(".md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
