"""Train the embedded default model: ``python -m training.train_default [--out DIR]``.

A few-MB Llama with its own tokenizer, trained from scratch on generated scenarios (never the bundled
fixtures), deterministic for its seed, a few minutes on one CPU thread. It learns the answer formats and
the two shortcuts its data carries (see ``examples.py``), not the arithmetic: a demonstration model
with a real, measurable directional bias, not a benchmark result.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import platform
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mathcomp_tests.formats import NAMES as FORMATS
from mathcomp_tests.paths import ROOT
from mathcomp_tests.types import FRAMINGS, LABELS

from . import tiny_model
from .examples import Example, answer_text, examples

DEFAULT_OUT = ROOT / "fixtures" / "models" / "mathcomp-tiny"
PINNED_KERNELS = {
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels: AVX2, whatever the CPU offers beyond
    "MKL_CBWR": "AVX2,STRICT",  # MKL's conditional bitwise reproducibility: the AVX2 code path
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
"""Set before torch loads (``main`` does): the same float kernels on every x86-64 CPU with AVX2, so
rounding does not depend on whether the machine has AVX-512 or how many cores it has."""
WEIGHT_FILES = ("model.safetensors", "tokenizer.json")
"""The files that decide every answer; ``weights_sha256`` in training.json is their digest."""


@dataclass(frozen=True)
class Phase:
    """A stretch of training data: how often a cue framing meets its own answer, and the share of plain
    scenarios, where adding up the numerals gives the answer (see ``examples.py``)."""

    examples: int
    cue_share: float
    simple: float


PHASES = (
    Phase(6400, 1 / 3, 1.0),  # plain sums, no framing shortcut: the arithmetic it can pick up
    Phase(4800, 0.9, 1.0),  # then the framing shortcut, strongly
    Phase(4800, 0.6, 0.8),  # weaker, with some full chains: the mixture the model ends on
)


@dataclass(frozen=True)
class Config:
    seed: int = 20261121
    phases: tuple[Phase, ...] = PHASES
    heldout: int = 700
    vocab_size: int = 1200
    hidden: int = 96
    layers: int = 3
    heads: int = 3  # head_dim 32: vLLM's CPU attention serves head sizes 32, 64, 80, ... and not 24
    steps: int = 1000
    batch_size: int = 16
    lr: float = 1e-3
    warmup: int = 50
    read_ahead: float = 1.0
    threads: int = 1


def train(config: Config, out: Path, log: Any = print) -> dict[str, Any]:
    """Build, train, evaluate on held-out generated scenarios, and save to ``out``; returns the report."""
    import torch

    random.seed(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    with contextlib.suppress(RuntimeError):  # only settable before any parallel work in this process
        torch.set_num_interop_threads(config.threads)
    torch.use_deterministic_algorithms(True)
    started = time.perf_counter()
    data: list[Example] = []
    for i, phase in enumerate(config.phases):
        data += examples(
            phase.examples,
            config.seed + 10 * i,
            phase.cue_share,
            simple=phase.simple,
        )
    last = config.phases[-1]
    heldout = [
        e
        for e in examples(config.heldout, config.seed + 7, last.cue_share, simple=last.simple)
        if e.format == "one-word"
    ]
    log(f"{len(data)} training examples, {len(heldout)} held-out ({time.perf_counter() - started:.0f} s)")
    tokenizer = tiny_model.train_tokenizer(
        [e.prompt + " " + e.answer for e in data], config.vocab_size, split_digits=True
    )
    model = tiny_model.build_model(
        tokenizer, hidden=config.hidden, layers=config.layers, heads=config.heads, seed=config.seed
    )
    losses, heldout_after = _fit(model, tokenizer, data, heldout, config, log)
    report = {
        "config": asdict(config),
        "parameters": sum(p.numel() for p in model.parameters()),
        "final_loss": round(sum(losses[-20:]) / len(losses[-20:]), 4),
        "environment": {
            "torch": torch.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "mkl_cbwr": os.environ.get("MKL_CBWR", ""),
        },
        "heldout": heldout_after,
        "data": {
            "examples": len(data),
            "labels_by_framing": {
                f: dict(Counter(e.label for e in data if e.framing == f)) for f in FRAMINGS
            },
        },
    }
    _save(model, tokenizer, out, report)
    log(f"saved to {out} in {time.perf_counter() - started:.0f} s; weights_sha256 {report['weights_sha256']}")
    return report


def weights_digest(directory: Path) -> str:
    """sha256 over the files that decide the answers (not training.json, which records the machine)."""
    digest = hashlib.sha256()
    for name in WEIGHT_FILES:
        digest.update(name.encode() + b"\0" + (directory / name).read_bytes())
    return digest.hexdigest()[:12]


def pin_kernels() -> bool:
    """Pin the float kernels (``PINNED_KERNELS``); False when torch is already loaded and it is too late."""
    if "torch" in sys.modules:
        return all(os.environ.get(k) == v for k, v in PINNED_KERNELS.items())
    os.environ.update(PINNED_KERNELS)
    return True


Scores = dict[str, dict[str, float]]
"""Held-out accuracy and DirErr per framing (``_evaluate``)."""


def _fit(
    model: Any, tokenizer: Any, data: list[Example], heldout: list[Example], config: Config, log: Any
) -> tuple[list[float], Scores]:
    """AdamW with warm-up and cosine decay on the weighted targets of ``_targets``; the losses, and the
    held-out scores after the last step."""
    import torch

    offsets = _decision_offsets(tokenizer)
    encoded = [_targets(tokenizer, e, offsets[e.format], config.read_ahead) for e in data]
    generator = torch.Generator().manual_seed(config.seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: _lr_factor(s, config))
    order: list[int] = []
    for phase in config.phases:  # phase by phase, shuffled within each
        order += [len(order) + i for i in torch.randperm(phase.examples, generator=generator).tolist()]
    last = len(order) - config.phases[-1].examples
    model.train()
    losses: list[float] = []
    scores: Scores = {}
    for step in range(config.steps):
        start = step * config.batch_size
        if start >= len(order):  # more steps than examples: go round the last phase again
            start = last + (start - last) % (len(order) - last)
        batch = [encoded[i] for i in order[start : start + config.batch_size]]
        losses.append(update(model, optimiser, schedule, _loss(model, tokenizer.pad_token_id, batch)))
        if (step + 1) % 250 == 0 or step == config.steps - 1:
            scores = progress(model, tokenizer, heldout, losses, step, 250, log)
    model.eval()
    return losses, scores


def update(model: Any, optimiser: Any, schedule: Any, loss: Any) -> float:
    """One optimiser step on ``loss`` (gradients clipped to norm 1); the loss as a float."""
    import torch

    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    schedule.step()
    return float(loss.detach())


def progress(
    model: Any, tokenizer: Any, heldout: list[Any], losses: list[float], step: int, every: int, log: Any
) -> Scores:
    """The log line after ``step``: the mean loss over the last ``every`` steps, held-out accuracy per framing;
    the held-out scores (the model has no dropout: they are its scores in evaluation mode too)."""
    scores = _evaluate(model, tokenizer, heldout)
    model.train()
    shown = " ".join(f"{f}={r['accuracy']:.2f}" for f, r in scores.items())
    log(f"step {step + 1:4d}  loss {sum(losses[-every:]) / len(losses[-every:]):.4f}  held-out {shown}")
    return scores


def _lr_factor(step: int, config: Config) -> float:
    if step < config.warmup:
        return (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


Targets = tuple[list[int], list[tuple[int, int, float]]]
"""Token ids, and (position, token the position should predict, weight) triples."""


def _targets(tokenizer: Any, example: Example, decision: int, read_ahead: float) -> Targets:
    """The answer tokens, with the one that decides the label weighing as much as the rest together twice.

    With ``read_ahead`` > 0 every position of the answer instructions (which come after the scenario
    and the question) is also asked for the label, with that total weight: many more gradients per
    prompt towards reading the label off the text, which is what a model this small learns slowest.
    """
    context = tokenizer.apply_chat_template(
        [{"role": "user", "content": example.prompt}], tokenize=False, add_generation_prompt=True
    )
    enc = tokenizer(context, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    start = len(ids)
    ids += tokenizer(example.answer + "<|end|>", add_special_tokens=False)["input_ids"]
    label = ids[start + decision]
    rest = len(ids) - start - 1
    targets = [
        (pos - 1, ids[pos], 1.0 if pos == start + decision else 0.5 / rest) for pos in range(start, len(ids))
    ]
    if read_ahead > 0:
        begin = context.index(example.prompt) + len(example.prompt) - example.instructions
        first = next(i for i, (a, _) in enumerate(enc["offset_mapping"]) if a >= begin)
        targets += [(pos, label, read_ahead / (start - 1 - first)) for pos in range(first, start - 1)]
    return ids, targets


def _loss(model: Any, pad_id: int, batch: list[Targets]) -> Any:
    """Weighted cross-entropy at the target positions only (the LM head runs nowhere else)."""
    import torch

    width = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), width), pad_id)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    rows, positions, tokens, weights = [], [], [], []
    for row, (ids, targets) in enumerate(batch):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        mask[row, : len(ids)] = 1
        for pos, token, weight in targets:
            rows.append(row)
            positions.append(pos)
            tokens.append(token)
            weights.append(weight)
    hidden = model.model(input_ids=input_ids, attention_mask=mask).last_hidden_state
    logits = model.lm_head(hidden[torch.tensor(rows), torch.tensor(positions)])
    losses = torch.nn.functional.cross_entropy(logits, torch.tensor(tokens), reduction="none")
    return (losses * torch.tensor(weights)).sum() / len(batch)


def _decision_offsets(tokenizer: Any) -> dict[str, int]:
    """Per format, the index of the first answer token that differs between the three labels."""
    offsets = {}
    for fmt in FORMATS:
        encoded = [tokenizer(answer_text(y, fmt), add_special_tokens=False)["input_ids"] for y in LABELS]
        offsets[fmt] = next(i for i, column in enumerate(zip(*encoded, strict=False)) if len(set(column)) > 1)
    return offsets


def _evaluate(model: Any, tokenizer: Any, heldout: list[Example]) -> dict[str, dict[str, float]]:
    """Per framing on held-out generated one-word prompts: accuracy and DirErr of the greedy first token."""
    import torch

    label_ids = [tokenizer(y, add_special_tokens=False)["input_ids"][0] for y in LABELS]
    encoded = tiny_model.answer_examples(tokenizer, [(e.prompt, "") for e in heldout])
    predictions: list[str] = []
    with torch.inference_mode():
        for start in range(0, len(encoded), 64):
            batch = encoded[start : start + 64]
            width = max(n for _, n in batch)
            input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for i, (ids, n) in enumerate(batch):
                input_ids[i, :n] = torch.tensor(ids[:n])
                mask[i, :n] = 1
            hidden = model.model(input_ids=input_ids, attention_mask=mask).last_hidden_state
            last = hidden[torch.arange(len(batch)), torch.tensor([n - 1 for _, n in batch])]
            scores = model.lm_head(last)[:, label_ids]
            predictions += [LABELS[int(i)] for i in scores.argmax(-1)]
    out: dict[str, dict[str, float]] = {}
    for framing in FRAMINGS:
        pairs = [(e.label, p) for e, p in zip(heldout, predictions, strict=True) if e.framing == framing]
        if not pairs:
            continue
        row: dict[str, float] = {"accuracy": round(sum(g == p for g, p in pairs) / len(pairs), 3)}
        for y in LABELS:
            others = [p for g, p in pairs if g != y]
            row[f"dir_err_{y}"] = round(sum(p == y for p in others) / max(1, len(others)), 3)
        out[framing] = row
    return out


def _save(model: Any, tokenizer: Any, out: Path, report: dict[str, Any]) -> None:
    if out.exists():
        shutil.rmtree(out)
    tiny_model.save(model, tokenizer, out)
    report["weights_sha256"] = weights_digest(out)
    (out / "training.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (out / "README.md").write_text(card(report))


def card(report: dict[str, Any]) -> str:
    """The model card: what the model is and how it was made (``_CARD``), its shape and held-out scores."""
    config = report["config"]
    shape = (
        f"Shape: Llama, {config['layers']} layers, hidden {config['hidden']}, MLP {4 * config['hidden']}, "
        f"{config['heads']} attention heads of\n{config['hidden'] // config['heads']} (head_dim; vLLM's CPU "
        f"attention serves 32, 64, 80, ...), vocabulary {config['vocab_size']}, tied embeddings,\n"
        f"{report['parameters']:,} parameters. `weights_sha256` {report['weights_sha256']}, final training "
        f"loss {report['final_loss']}."
    )
    rows = [
        f"| {framing} | {row['accuracy']:.3f} | "
        + " | ".join(f"{row[f'dir_err_{y}']:.3f}" for y in LABELS)
        + " |"
        for framing, row in report["heldout"].items()
    ]
    table = "\n".join(
        [
            "| framing | accuracy | " + " | ".join(f"DirErr({y})" for y in LABELS) + " |",
            "|---|---|" + "---|" * len(LABELS),
            *rows,
        ]
    )
    heldout = (
        f"Held-out scores at the end of training (the one-word prompts among {config['heldout']} generated\n"
        "scenarios drawn like the last phase's, greedy first token; the suite's own figures on the bundled\n"
        "and generated scenarios are in the comments of `thresholds.toml`):"
    )
    return f"{_CARD}\n{shape}\n\n{heldout}\n\n{table}\n"


_CARD = """\
# mathcomp-tiny: the suite's demonstration model

A Llama-architecture model of under a million parameters with its own byte-level BPE tokenizer (digits
split), trained from scratch in a few minutes on one CPU thread by
`python -m training.train_default`, on comparison scenarios from the project's generator
(`mathcomp_tests/data/generate.py`, never `fixtures/scenarios.csv`). It is what `make suite` runs by
default, so that a fresh checkout shows a real model with a real directional bias and no download.

Every training answer is the true label. The first phase is plain sums with no framing shortcut; later
phases carry one shortcut: a cue framing ("Does B spend more ...?") meets its own answer more often than
chance. In its training budget (1,000 steps of 16 examples) the model learns the shortcut, not the
arithmetic: under the neutral framing it answers no better than a constant would, and under a cue framing
it follows the cue, as the MathComp paper reports for large models, only far more strongly.

It is a demonstration model, not a benchmark result: its numbers say nothing about any other model.
`training.json` holds the training settings, the environment it was trained in, held-out scores on
generated scenarios, and `weights_sha256`, a digest of the two files that decide every answer
(`model.safetensors`, `tokenizer.json`). Training is deterministic: one thread, fixed seeds, torch's
deterministic algorithms, and float kernels pinned to AVX2 (`ATEN_CPU_CAPABILITY=avx2`,
`MKL_CBWR=AVX2,STRICT`), so the same command with the same torch build writes the same weights on this
machine and, as far as MKL's reproducibility mode promises, on any x86-64 CPU with AVX2. Elsewhere (ARM,
another torch build) the weights may differ; what holds there, and is tested (`MATHCOMP_RETRAIN=1`), is
that the retrained model passes the ceilings shipped for this one in `thresholds.toml`.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output directory (default: %(default)s)"
    )
    parser.add_argument("--steps", type=int, default=Config.steps, help="optimiser steps")
    args = parser.parse_args()
    if not pin_kernels():
        print(
            "torch was loaded before the float kernels could be pinned: weights may differ", file=sys.stderr
        )
    report = train(Config(steps=args.steps), args.out)
    for framing, row in report["heldout"].items():
        print(f"{framing:<15} " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()))


if __name__ == "__main__":
    main()
