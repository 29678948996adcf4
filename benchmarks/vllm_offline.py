"""vLLM's own offline engine on prompts rendered elsewhere; run by the vLLM virtualenv's Python.

    <vllm python> benchmarks/vllm_offline.py --model DIR --prompts FILE --out FILE [--dtype float32]

FILE holds {"prompts": [text, ...], "max_tokens": N} (or a list, one N per prompt). The texts are
tokenised here without special tokens (as the suite's batched client asks the server to), handed to
``LLM.generate`` as token ids with greedy sampling, and only that call is timed (the engine's start is
not). Writes {"seconds", "tokenize_s" (the texts' tokenisation, timed apart: a server does it within its
time), "prompts", "outputs": [token ids, ...], "version"}. Imports nothing of
mathcomp_tests: it runs in vLLM's environment, not the suite's.

With ``--ready FILE --go FILE`` it creates the first once warmed up and starts the timed call only when
the second exists, so that several engines (one per core) are timed over the same window.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--prompts", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--no-prefix-caching", action="store_true")
    parser.add_argument("--warmup", type=int, default=16)
    parser.add_argument("--ready", help="a file created once the engine is warmed up")
    parser.add_argument("--go", help="a file whose appearance starts the timed call")
    args = parser.parse_args()

    import vllm
    from vllm import LLM, SamplingParams

    with open(args.prompts, encoding="utf-8") as fh:
        given: dict[str, Any] = json.load(fh)
    llm = LLM(model=args.model, dtype=args.dtype, enable_prefix_caching=not args.no_prefix_caching)
    tokenizer = llm.get_tokenizer()
    tokenize_started = time.perf_counter()
    ids = [tokenizer.encode(text, add_special_tokens=False) for text in given["prompts"]]
    tokenize_s = time.perf_counter() - tokenize_started
    inputs: list[Any] = [{"prompt_token_ids": p} for p in ids]
    budgets = given["max_tokens"]
    budgets = budgets if isinstance(budgets, list) else [budgets] * len(inputs)
    params = [SamplingParams(temperature=0.0, max_tokens=int(n)) for n in budgets]
    llm.generate(inputs[: args.warmup], params[: args.warmup], use_tqdm=False)
    if args.ready:
        Path(args.ready).touch()
    while args.go and not Path(args.go).exists():
        time.sleep(0.01)
    started = time.perf_counter()
    outputs = llm.generate(inputs, params, use_tqdm=False)
    seconds = time.perf_counter() - started
    result = {
        "seconds": round(seconds, 3),
        "tokenize_s": round(tokenize_s, 3),
        "prompts": len(inputs),
        "prompt_tokens": sum(len(p) for p in ids),
        "outputs": [list(o.outputs[0].token_ids) for o in outputs],
        "version": vllm.__version__,
    }
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
