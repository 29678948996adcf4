"""What the report's drawing costs: ``python -m benchmarks.report_figures [--run-dir DIR] [--repeat N]``.

Times, on a finished run folder (or, without one, on a made-up 14-case run against a baseline with 300
scenarios each), the verdict, each figure (heat-map, change map, category bars) and the whole page, then
the history page over ``--history`` copies of that run. Prints a table and writes
``reports/benchmarks/report_figures.json``. The run's charts are HTML; only the history page draws with
matplotlib (its import is paid in its first repeat).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import OUT_DIR, load

LABELS = ("less", "more", "equal")
FRAMINGS = (
    "neutral",
    "direct-more",
    "direct-less",
    "direct-equal",
    "indirect-more",
    "indirect-less",
    "indirect-equal",
)


def made_up_run(seed: int = 0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 14-case one-word run on 300 scenarios with a baseline: summary.json and results.jsonl records."""
    rng = random.Random(seed)
    golds = [LABELS[i % 3] for i in range(300)]
    cases, records = [], []
    for framing in FRAMINGS:
        for position in ("begin", "end"):
            case_id = f"{framing}-{position}-std-one-word"
            answers = [rng.choice(LABELS) for _ in golds]
            confusion = {g: dict.fromkeys((*LABELS, "invalid", "error"), 0) for g in LABELS}
            for g, a in zip(golds, answers, strict=True):
                confusion[g][a] += 1
            dir_err = {
                y: sum(a == y for g, a in zip(golds, answers, strict=True) if g != y) / 200 for y in LABELS
            }
            changes = {
                y: {
                    "baseline": 0.3,
                    "candidate": 0.3 + d,
                    "difference": d,
                    "low": d - 0.05,
                    "high": d + 0.05,
                    "p_value": 0.001 if abs(d) > 0.05 else 0.5,
                    "max_increase": 0.05,
                    "significant": abs(d) > 0.05,
                    "breach": d > 0.05,
                }
                for y in LABELS
                for d in [rng.uniform(-0.1, 0.1)]
            }
            breaches = [f"DirErr({y})" for y in LABELS if dir_err[y] > 0.35]
            breaches += [f"DirErr({y}) rise" for y in LABELS if changes[y]["breach"]]
            cases.append(
                {
                    "case": case_id,
                    "framing": framing,
                    "position": position,
                    "identity": "std",
                    "identity_on": "b",
                    "format": "one-word",
                    "options": "natural",
                    "protocol": "plain",
                    "passed": not breaches,
                    "error": None,
                    "breaches": breaches,
                    "scores": {
                        "n": 300,
                        "confusion": confusion,
                        "dir_err": dir_err,
                        "accuracy": 0.33,
                        "invalid_rate": 0.0,
                        "error_rate": 0.0,
                        "dir_err_ci": None,
                    },
                    "ceilings": {
                        "dir_err": dict.fromkeys(LABELS, 0.35),
                        "invalid_rate": 0.1,
                        "error_rate": 0.02,
                        "gate": "point",
                        "max_increase": dict.fromkeys(LABELS, 0.05),
                    },
                    "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": None, "requests": 300},
                    "baseline": {"status": "compared", "changes": changes},
                    "examples": [],
                }
            )
            records += [
                {
                    "case": case_id,
                    "scenario": str(i),
                    "category": f"category {i % 10}",
                    "gold": g,
                    "label": a,
                    "status": "ok",
                }
                for i, (g, a) in enumerate(zip(golds, answers, strict=True))
            ]
    summary: dict[str, Any] = {
        "run_id": "20261124-120000-made-up-0000",
        "model": "made-up",
        "resolved": "made-up",
        "revision": None,
        "prompt_set": "hf",
        "scenarios": 300,
        "cases": cases,
        "cases_run": len(cases),
        "cases_failed": sum(not c["passed"] for c in cases),
        "cases_errored": 0,
        "prompts_sent": 0,
        "dataset": {"name": "made-up", "policy": "strict", "excluded": [], "kept_invalid": [], "sha256": "0"},
        "thresholds": "thresholds.toml",
        "threshold_sections": [],
        "usage": {},
        "baseline": {
            "source": None,
            "model": "base",
            "paired_test": "mcnemar",
            "holm": False,
            "alpha": 0.05,
            "compared": len(cases),
            "no_baseline": [],
            "rises": [],
            "holm_failures": [],
        },
        "selection": {
            "framings": list(FRAMINGS),
            "positions": ["begin", "end"],
            "identities": ["std"],
            "formats": ["one-word"],
            "protocols": ["plain"],
        },
    }
    return summary, records


def timed(work: Callable[[], object], repeat: int) -> dict[str, float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", type=Path, help="a finished run folder (default: a made-up run)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--history", type=int, default=6, help="runs on the history page (copies)")
    args = parser.parse_args()

    from mathcomp_tests.history import build
    from mathcomp_tests.report import charts, headline, page, pooled, sections, standalone

    if args.run_dir is not None:
        summary, records = standalone.load_run(args.run_dir, warn=lambda _: None)
        source = str(args.run_dir)
    else:
        summary, records = made_up_run()
        source = "made-up: 14 cases x 300 scenarios, with a baseline"
    cases = summary["cases"]
    fmt = cases[0]["format"]
    rows = sections._rows_by_position([c for c in cases if c["format"] == fmt], cases[0]["identity"])
    load_before = load()
    results = {
        "verdict": timed(lambda: headline.verdict_html(summary), args.repeat),
        "heat-map": timed(lambda: charts.direction_heatmaps(rows, "x"), args.repeat),
        "change map": timed(lambda: charts.delta_heatmaps(rows, "x"), args.repeat),
        "category bars (with bootstrap)": timed(
            lambda: charts.category_bars(pooled.by_category(records), "x"), args.repeat
        ),
        "whole page (every section)": timed(
            lambda: page.run_sections(summary, cases, records, str(summary["model"])), args.repeat
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.history):
            folder = Path(tmp) / f"2026112{i}-120000-run-{i:04d}"
            folder.mkdir()
            (folder / "summary.json").write_text(json.dumps({**summary, "run_id": folder.name}))
        results[f"history page ({args.history} runs)"] = timed(
            lambda: build.history(Path(tmp)), args.repeat
        )
    out = {
        "source": source,
        "repeat": args.repeat,
        "results": results,
        "load": {"before": load_before, "after": load()},
    }
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "report_figures.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"report drawing on {source} (charts in HTML; the history page's picture in matplotlib)")
    for name, r in results.items():
        print(f"  {name:<34} median {r['median_s']:6.2f} s   min {r['min_s']:6.2f} s")
    print(
        f"load average {out['load']['before']} -> {out['load']['after']}; wrote {OUT_DIR / 'report_figures.json'}"
    )


if __name__ == "__main__":
    main()
