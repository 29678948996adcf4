"""The same prompts through lm-evaluation-harness' HF backend (HFLM), timed; run by hf_throughput.py.

Runs in the benchmark's own environment (benchmarks/.venv-lmeval), never in the project's:
``python lmeval_side.py IN.json OUT.json``. IN holds the rendered prompts and settings; OUT gets the
answers and the seconds each request type took, model load excluded.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def main(source: str, target: str) -> None:
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    with open(source) as fh:
        job: dict[str, Any] = json.load(fh)
    lm = HFLM(pretrained=job["model"], device=job["device"], batch_size=job["batch_size"], dtype=job["dtype"])
    texts: list[str] = job["texts"]
    gen_kwargs = {"until": [], "max_gen_toks": job["max_new_tokens"], "do_sample": False}
    warm = [Instance("generate_until", {}, (texts[0], gen_kwargs), 0)]
    lm.generate_until(warm, disable_tqdm=True)
    requests = [Instance("generate_until", {}, (t, dict(gen_kwargs)), i) for i, t in enumerate(texts)]
    started = time.perf_counter()
    answers = lm.generate_until(requests, disable_tqdm=True)
    generate_s = time.perf_counter() - started
    size = job["case_size"]
    started = time.perf_counter()
    for i in range(0, len(texts), size):
        chunk = [
            Instance("generate_until", {}, (t, dict(gen_kwargs)), k)
            for k, t in enumerate(texts[i : i + size])
        ]
        lm.generate_until(chunk, disable_tqdm=True)
    generate_per_case_s = time.perf_counter() - started
    pairs = [(t, label) for t in texts[: job["loglikelihood_prompts"]] for label in job["labels"]]
    requests = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    started = time.perf_counter()
    scores = lm.loglikelihood(requests, disable_tqdm=True)
    loglikelihood_s = time.perf_counter() - started
    n = len(job["labels"])
    picked = [job["labels"][max(range(n), key=lambda k: scores[i + k][0])] for i in range(0, len(scores), n)]
    out = {
        "lm_eval_version": _version(),
        "generate_s": generate_s,
        "generate_per_case_s": generate_per_case_s,
        "answers": answers,
        "loglikelihood_s": loglikelihood_s,
        "loglikelihood_prompts": len(picked),
        "loglikelihood_labels": picked,
    }
    with open(target, "w") as fh:
        json.dump(out, fh)


def _version() -> str:
    from importlib.metadata import version

    return version("lm_eval")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
