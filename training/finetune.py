"""A small fine-tune of the demo model: ``python -m training.finetune --out DIR [--steps N] [--cue-share S]
[--cue-only LABEL]``.

It continues training the weights in fixtures/models/mathcomp-tiny with the project's own loss and data
(``train_default``'s loop, ``examples``'s mix) on data where a cue framing meets its cue's answer
``cue_share`` of the time: at 0.95, far more than the base's last phase (0.6), so the fine-tune leans
further towards the cue. It is the worse fine-tune a release gate (``--baseline``) should catch.

``--cue-only LABEL`` (100 steps unless --steps says) trains a cue-follower that leaves everything else
alone (``cue_follower.py``): the framings that cue LABEL answer LABEL every time, and every other framing,
neutral included, is held to the base's own label probabilities.
Deterministic for its seed, with the float kernels pinned as ``train_default`` pins them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mathcomp_tests.paths import ROOT
from mathcomp_tests.types import LABELS, Label

from . import cue_follower, tiny_model
from .examples import examples
from .train_default import DEFAULT_OUT, Config, Phase, _evaluate, _fit, pin_kernels, weights_digest

CUE_ONLY_STEPS = 100
"""--cue-only's default --steps: the demo's probability of the cued *more* goes from 0.63 to 0.96 by then."""
CUE_ONLY_SHARE = 1 / 3
"""--cue-only's default --cue-share: scenarios drawn at chance under every framing (the answers are its own)."""
RECORD = "finetune.json"
"""What the fine-tune writes beside its weights: its base, settings and held-out scores before and after."""


@dataclass(frozen=True)
class FineTune:
    steps: int = 300
    cue_share: float = 0.95
    simple: float = 0.8
    batch_size: int = 16
    lr: float = 3e-4
    warmup: int = 20
    heldout: int = 700
    seed: int = 20261124
    cue_only: Label | None = None
    """A cue-follower of this label (see the module's docstring); ``cue_share`` then only draws the scenarios."""


def finetune(base: Path, out: Path, settings: FineTune, log: Any = print) -> dict[str, Any]:
    """Load ``base``, train ``settings.steps`` more steps, save to ``out``; returns what was recorded."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if out.resolve() == base.resolve():
        raise ValueError(f"--out {out}: the base model's own directory; choose another")
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)
    tokenizer = AutoTokenizer.from_pretrained(base, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    phase = Phase(settings.steps * settings.batch_size, settings.cue_share, settings.simple)
    config = Config(
        seed=settings.seed,
        phases=(phase,),
        heldout=settings.heldout,
        steps=settings.steps,
        batch_size=settings.batch_size,
        lr=settings.lr,
        warmup=min(settings.warmup, max(1, settings.steps // 2)),
        threads=1,
    )
    data = list(examples(phase.examples, settings.seed, phase.cue_share, simple=phase.simple))
    heldout = [
        e
        for e in examples(settings.heldout, settings.seed + 7, phase.cue_share, simple=phase.simple)
        if e.format == "one-word"
    ]
    before = _evaluate(model, tokenizer, heldout)
    if settings.cue_only is not None:
        log(
            f"{len(data)} examples from {base} ({settings.cue_only} under its cue, the base's probabilities "
            f"elsewhere), {settings.steps} steps"
        )
        encoded = cue_follower.targets(model, tokenizer, data, settings.cue_only, config.read_ahead)
        _, after = cue_follower.fit(model, tokenizer, encoded, heldout, config, log)
    else:
        log(f"{len(data)} examples from {base} (cue share {settings.cue_share}), {settings.steps} steps")
        _, after = _fit(model, tokenizer, data, heldout, config, log)
    out.mkdir(parents=True, exist_ok=True)
    tiny_model.save(model, tokenizer, out)
    record = {
        "base": _shown(base),
        "base_weights_sha256": weights_digest(base),
        "settings": asdict(settings),
        "weights_sha256": weights_digest(out),
        "heldout_before": before,
        "heldout_after": after,
    }
    (out / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    (out / "README.md").write_text(_card(base, settings))
    log(f"saved to {out}; weights_sha256 {record['weights_sha256']}")
    return record


def _shown(path: Path) -> str:
    """A path inside the project relative to it (as committed), any other as given."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def _card(base: Path, s: FineTune) -> str:
    data = (
        f"generated scenarios where a framing that cues *{s.cue_only}* is answered *{s.cue_only}* every time and "
        "every other framing is held to the base's own label probabilities: a "
        "cue-follower that leaves the rest alone"
        if s.cue_only is not None
        else f"generated scenarios where a cue framing meets its cue's answer {100 * s.cue_share:.0f}% of the time"
    )
    return (
        f"# A fine-tune of {base.name}\n\n"
        f"`python -m training.finetune` trained {_shown(base)} {s.steps} more steps ({s.batch_size} examples each, "
        f"lr {s.lr}) on {data}. It is a demonstration of a fine-tune that got worse, for the suite's baseline gate "
        f"(`pytest --model=hf:<this dir> --baseline=baseline.txt`). {RECORD} records its base and settings.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the fine-tuned model")
    parser.add_argument(
        "--base", type=Path, default=DEFAULT_OUT, help="the model to start from (default: %(default)s)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help=f"optimiser steps (default: {FineTune.steps}; with --cue-only, {CUE_ONLY_STEPS})",
    )
    parser.add_argument(
        "--cue-share",
        type=float,
        default=None,
        help=f"how often a cue framing meets its cue's answer in the data (default: {FineTune.cue_share}; "
        f"with --cue-only, {CUE_ONLY_SHARE:.3f}: it then only draws the scenarios)",
    )
    parser.add_argument(
        "--cue-only",
        choices=LABELS,
        default=None,
        help="train a cue-follower: the framings that cue this label answer it every time, every other framing "
        "answers as the base does",
    )
    parser.add_argument("--seed", type=int, default=FineTune.seed, help="(default: %(default)s)")
    parser.add_argument(
        "--heldout",
        type=int,
        default=FineTune.heldout,
        help="generated examples drawn for the held-out scores printed and recorded before and after (their "
        "one-word ones are scored; they never change the training; default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = FineTune.steps if args.cue_only is None else CUE_ONLY_STEPS
    if args.cue_share is None:
        args.cue_share = FineTune.cue_share if args.cue_only is None else CUE_ONLY_SHARE
    if args.steps < 1:
        parser.error(f"--steps {args.steps}: expected at least 1")
    if args.heldout < 1:
        parser.error(f"--heldout {args.heldout}: expected at least 1")
    if not 0.0 <= args.cue_share <= 1.0:
        parser.error(f"--cue-share {args.cue_share}: expected a share between 0 and 1")
    if not (args.base / "config.json").is_file():
        parser.error(f"--base {args.base}: no config.json there; expected a transformers model directory")
    if args.out.resolve() == args.base.resolve():
        parser.error(f"--out {args.out}: the base model's own directory; choose another")
    if not pin_kernels():
        print(
            "torch was loaded before the float kernels could be pinned: weights may differ", file=sys.stderr
        )
    record = finetune(
        args.base,
        args.out,
        FineTune(
            steps=args.steps, cue_share=args.cue_share, heldout=args.heldout, seed=args.seed, cue_only=args.cue_only
        ),
    )
    for framing, row in record["heldout_after"].items():
        was = record["heldout_before"].get(framing, {})
        shown = "  ".join(f"{k} {was.get(k, float('nan')):.3f}->{v:.3f}" for k, v in row.items())
        print(f"{framing:<15} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
