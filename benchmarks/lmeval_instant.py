"""lm-evaluation-harness on the suite's prompts with a model that answers instantly; run by harness_overhead.py.

Runs in the benchmark's own environment (benchmarks/.venv-lmeval), never in the project's:
``python lmeval_instant.py IN.json OUT.json``. IN names a JSONL file of documents (``prompt``, ``label``) and
the task folder; the model is a custom LM class registered with lm_eval's model registry that answers
every request with the first label at once, so what is timed is the harness itself: task loading
(``datasets``), Jinja rendering of every document, Instance building, request routing, metric
computation and aggregation, through ``lm_eval.simple_evaluate`` as a user's run goes. OUT gets the
seconds of the import, of the evaluation, and the number of requests the model saw.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

started = time.perf_counter()
import lm_eval  # noqa: E402
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.api.registry import register_model  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402

IMPORT_S = time.perf_counter() - started


@register_model("mathcomp-instant")
class InstantLM(LM):
    """Answers at once: "less" to every generation, 0.0 to every log-likelihood."""

    seen = 0

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        InstantLM.seen += len(requests)
        return ["less"] * len(requests)

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        InstantLM.seen += len(requests)
        return [(0.0, False)] * len(requests)

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        InstantLM.seen += len(requests)
        return [0.0] * len(requests)


def main(source: str, target: str) -> None:
    with open(source) as fh:
        job: dict[str, Any] = json.load(fh)
    manager = TaskManager(include_path=job["task_dir"])
    started = time.perf_counter()
    results = lm_eval.simple_evaluate(
        model="mathcomp-instant",
        tasks=[job["task"]],
        task_manager=manager,
        num_fewshot=0,
        log_samples=False,
        bootstrap_iters=0,
    )
    evaluate_s = time.perf_counter() - started
    assert results is not None
    out = {
        "lm_eval_version": _version(),
        "import_s": IMPORT_S,
        "evaluate_s": evaluate_s,
        "requests": InstantLM.seen,
        "metrics": {k: v for k, v in results["results"][job["task"]].items() if isinstance(v, float)},
    }
    with open(target, "w") as fh:
        json.dump(out, fh)


def _version() -> str:
    from importlib.metadata import version

    return version("lm_eval")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
