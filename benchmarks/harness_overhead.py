"""What the harness costs per prompt, ours against lm-evaluation-harness: ``python -m benchmarks.harness_overhead``.

The full one-word matrix with the paper's identities (112 cases, 33,600 prompts) on the symbolic
reference, which answers at once, so what is timed is the harness: pytest end to end including the
report, with a fresh cache, the same cache again and ``--no-cache`` (benchmarks/cache_cost.py). The same
33,600 rendered prompts go through lm-evaluation-harness as one task (a JSONL file, a task YAML with
``generate_until``, ``exact_match`` against the gold label), answered by a custom LM class registered
with lm_eval's registry that returns at once (benchmarks/lmeval_instant.py, in benchmarks/.venv-lmeval:
``python -m benchmarks.hf_throughput --setup-lmeval`` once). Both sides are timed as a user sees them:
the whole command, start-up included. Prints the numbers and writes reports/benchmarks/harness_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cache_cost import measure
from benchmarks.common import OFFLINE, PAPER_IDENTITIES, ROOT, load, suite_env, write_json
from mathcomp_tests import prompts
from mathcomp_tests.data import scenarios
from mathcomp_tests.paths import fixtures
from mathcomp_tests.types import FRAMINGS, POSITIONS, Condition

LMEVAL_PYTHON = ROOT / "benchmarks" / ".venv-lmeval" / "bin" / "python"
TASK = "mathcomp_one_word"
TASK_YAML = """task: {task}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{label}}}}"
generation_kwargs:
  until: []
  max_gen_toks: 8
  do_sample: false
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def matrix_documents() -> list[dict[str, str]]:
    """The 33,600 one-word prompts of the matrix (7 framings x 2 positions x 8 identities x 300)."""
    prompt_set = prompts.load_prompt_set("hf")
    identities = {"std": prompts.std_names(prompt_set), **prompts.load_identities()}
    rows = scenarios.load(fixtures() / "scenarios.csv")
    docs = []
    for identity in PAPER_IDENTITIES.split(","):
        for framing in FRAMINGS:
            for position in POSITIONS:
                condition = Condition(framing, position, identity)
                for s in rows:
                    prompt = prompts.build(s, condition, prompt_set, identities[identity])
                    docs.append({"prompt": prompt.text, "label": s.label})
    return docs


def lm_eval_run(docs: list[dict[str, str]], repeat: int) -> dict[str, Any]:
    if not LMEVAL_PYTHON.exists():
        return {
            "skipped": "no benchmarks/.venv-lmeval: run `python -m benchmarks.hf_throughput --setup-lmeval`"
        }
    walls, evaluates, out = [], [], {}
    with tempfile.TemporaryDirectory(prefix="mathcomp-lmeval-") as tmp:
        data = Path(tmp, "docs.jsonl")
        data.write_text("".join(json.dumps(d) + "\n" for d in docs))
        task_dir = Path(tmp, "tasks")
        task_dir.mkdir()
        (task_dir / f"{TASK}.yaml").write_text(TASK_YAML.format(task=TASK, data=data))
        source, target = Path(tmp, "in.json"), Path(tmp, "out.json")
        source.write_text(json.dumps({"task_dir": str(task_dir), "task": TASK}))
        env = {**suite_env(), **OFFLINE, "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(Path(tmp, "hf"))}
        side = Path(__file__).with_name("lmeval_instant.py")
        for _ in range(repeat):  # each run with a fresh datasets cache (HF_HOME), as a first run is
            started = time.perf_counter()
            proc = subprocess.run(
                [str(LMEVAL_PYTHON), str(side), str(source), str(target)],
                env=env,
                capture_output=True,
                text=True,
            )
            walls.append(time.perf_counter() - started)
            if proc.returncode != 0:
                return {"failed": proc.stderr[-3000:]}
            out = json.loads(target.read_text())
            evaluates.append(out["evaluate_s"])
            subprocess.run(["rm", "-rf", str(Path(tmp, "hf"))], check=False)
    return {
        "version": out["lm_eval_version"],
        "api": "lm_eval.simple_evaluate with a YAML task and a registered LM class",
        "requests": out["requests"],
        "metrics": out["metrics"],
        "import_s": round(out["import_s"], 3),
        "wall_s_median": round(statistics.median(walls), 3),
        "evaluate_s_median": round(statistics.median(evaluates), 3),
        "wall_s_all": [round(w, 3) for w in walls],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ours-only", action="store_true")
    args = parser.parse_args()
    before = load()
    docs = matrix_documents()
    ours = measure(args.repeat)
    theirs = {} if args.ours_only else lm_eval_run(docs, args.repeat)
    n = len(docs)
    per_prompt = {k: round(1e6 * v / n, 1) for k, v in ours["seconds_median"].items() if k != "startup"}
    result: dict[str, Any] = {
        "benchmark": "harness_overhead",
        "prompts": n,
        "ours": ours,
        "ours_us_per_prompt": per_prompt,
        "lm_eval": theirs,
        "load_before": before,
        "load_after": load(),
    }
    if "wall_s_median" in theirs:
        theirs_us = 1e6 * theirs["wall_s_median"] / n
        result["lm_eval_us_per_prompt"] = round(theirs_us, 1)
        result["lm_eval_evaluate_only_us_per_prompt"] = round(1e6 * theirs["evaluate_s_median"] / n, 1)
        result["ratio_lm_eval_over_ours"] = {k: round(theirs_us / v, 2) for k, v in per_prompt.items()}
        result["goal_10x_met"] = all(r >= 10 for r in result["ratio_lm_eval_over_ours"].values())
    print(json.dumps({k: v for k, v in result.items() if k != "ours"}, indent=2))
    print(f"written: {write_json('harness_overhead', result).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
