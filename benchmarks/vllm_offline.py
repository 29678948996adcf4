"""vLLM's own offline engine on prompts rendered elsewhere; run by the vLLM virtualenv's Python.

    <vllm python> benchmarks/vllm_offline.py --model DIR --prompts FILE --out FILE [--dtype float32]

FILE holds {"prompts": [text, ...], "max_tokens": N} (or a list, one N per prompt). The texts are
tokenised here without special tokens (as the suite's batched client asks the server to), handed to
``LLM.generate`` as token ids with greedy sampling, and only that call is timed (the engine's start is
not). Writes {"seconds", "prompts", "outputs": [token ids, ...], "version"}. Imports nothing of
mathcomp_tests: it runs in vLLM's environment, not the suite's.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--prompts", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--no-prefix-caching", action="store_true")
    parser.add_argument("--warmup", type=int, default=16)
    args = parser.parse_args()

    import vllm
    from vllm import LLM, SamplingParams

    with open(args.prompts, encoding="utf-8") as fh:
        given: dict[str, Any] = json.load(fh)
    llm = LLM(model=args.model, dtype=args.dtype, enable_prefix_caching=not args.no_prefix_caching)
    tokenizer = llm.get_tokenizer()
    ids = [tokenizer.encode(text, add_special_tokens=False) for text in given["prompts"]]
    inputs: list[Any] = [{"prompt_token_ids": p} for p in ids]
    budgets = given["max_tokens"]
    budgets = budgets if isinstance(budgets, list) else [budgets] * len(inputs)
    params = [SamplingParams(temperature=0.0, max_tokens=int(n)) for n in budgets]
    llm.generate(inputs[: args.warmup], params[: args.warmup], use_tqdm=False)
    started = time.perf_counter()
    outputs = llm.generate(inputs, params, use_tqdm=False)
    seconds = time.perf_counter() - started
    result = {
        "seconds": round(seconds, 3),
        "prompts": len(inputs),
        "prompt_tokens": sum(len(p) for p in ids),
        "outputs": [list(o.outputs[0].token_ids) for o in outputs],
        "version": vllm.__version__,
    }
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
