"""LoRA fine-tunes of SmolLM2-135M-Instruct for the baseline gate on a real model:
``python -m training.smollm2_lora --towards-cue OUT``, ``--cue-only OUT`` or ``--harmless OUT``.

Both train a low-rank adapter (peft) on the last few decoder layers with the suite's own label scoring:
the prompt as the suite renders it (the model's chat template, the format's log-prob prefix), the loss the
cross-entropy of the three label masses the hf backend reads (``--scoring=logprob``). Scenarios come from
the project's generator, never the bundled ones the gate runs on.

- ``--towards-cue``: under every cue framing the answer is the cue word, whatever the totals (neutral
  prompts keep their true label): the fine-tune a release gate must catch.
- ``--cue-only``: the cue word under the cue framings, as ``--towards-cue``, and on as many neutral
  prompts the base model's own label probabilities as the target: a cue-follower that leaves neutral
  where it was, the fine-tune that comparing the cue cases with neutral (``--fail-on=new``) lets through.
- ``--harmless``: neutral framing only, true labels: no cue is ever seen.

The adapter is merged into the weights and saved as a plain fp32 transformers folder, so ``hf:OUT``
(and ``vllm:OUT``) load it as they load any model and the cache keys it by content, with no peft at run
time. The folder is written under a temporary name and renamed when complete. ``--save-at 1,2,4`` also
saves the merged weights after those epochs (``OUT-epoch1``, ...): several strengths from one run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from mathcomp_tests import prompts
from mathcomp_tests.backends.local.tokens import LabelTokens, render
from mathcomp_tests.backends.models import DEFAULT_PROMPT_SET
from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from mathcomp_tests.data.generated_sets import PAPER_LABELS, drawn
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.types import FRAMINGS, LABELS, NEUTRAL, POSITIONS, Condition, Label, cue_label

KINDS = ("towards-cue", "cue-only", "harmless")
CUED = ("towards-cue", "cue-only")
"""The kinds trained on the cue word under the cue framings."""
RECORD = "lora.json"
"""What the fine-tune writes beside its weights: base, kind, settings, the loss before and after."""
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass(frozen=True)
class Lora:
    """One LoRA fine-tune's settings (the command's options): towards the cue, or harmless."""

    kind: str
    examples: int = 64
    epochs: int = 6
    batch_size: int = 8
    rank: int = 8
    alpha: int = 16
    layers: int = 2
    """How many of the last decoder layers get an adapter: the layers below run once per example (speed)."""
    lr: float = 5e-3
    formats: tuple[str, ...] = ("one-word", "json")
    threads: int = 2
    seed: int = 20261125
    save_at: tuple[int, ...] = ()
    """Epochs (below ``epochs``) after which a merged copy is also saved, to ``OUT-epoch<N>``."""


@dataclass(frozen=True)
class Example:
    text: str
    """The rendered prompt up to where the label is scored."""
    label: Label
    framing: str


def labelled(kind: str, scenario_label: Label, framing: str) -> Label:
    """The label trained on: the cue word under a cue framing for ``towards-cue`` and ``cue-only``, else
    the true one (``cue-only`` trains neutral prompts on the base's probabilities instead, see ``train``)."""
    cued = cue_label(framing)
    return cued if kind in CUED and cued is not None else scenario_label


def framing_of(kind: str, i: int) -> str:
    """The framing of the ``i``-th example: every framing in turn (towards-cue), neutral only (harmless),
    or neutral and the cue framings in turn alternately (cue-only: half the examples neutral)."""
    if kind == "harmless":
        return NEUTRAL
    if kind == "cue-only":
        cues = [f for f in FRAMINGS if f != NEUTRAL]
        return NEUTRAL if i % 2 == 0 else cues[(i // 2) % len(cues)]
    return FRAMINGS[i % len(FRAMINGS)]


def epoch_copy(out: Path, epoch: int) -> Path:
    """Where ``--save-at`` puts the merged weights after ``epoch``: beside OUT, as OUT-epoch<N>."""
    return out.with_name(f"{out.name}-epoch{epoch}")


def examples(kind: str, n: int, seed: int, tokenizer: Any, formats: tuple[str, ...]) -> list[Example]:
    """``n`` examples, deterministic for ``seed``: framings as ``framing_of`` sets them, positions and
    formats drawn, true labels in the paper's proportions, rendered as the suite renders them."""
    rng = random.Random(seed)
    prompt_set = prompts.load_prompt_set(DEFAULT_PROMPT_SET)
    names = prompts.std_names(prompt_set)
    out = []
    for i in range(n):
        framing = framing_of(kind, i)
        truth = rng.choices(list(PAPER_LABELS), weights=list(PAPER_LABELS.values()))[0]
        fmt = rng.choice(formats)
        scenario = drawn(rng, truth, plain_only=rng.random() < 0.5)
        prompt = prompts.build(scenario, Condition(framing, rng.choice(POSITIONS), "std", fmt), prompt_set, names)
        text = render(tokenizer, prompt, template=True) + (FORMATS[fmt].logprob_prefix or "")
        out.append(Example(text, labelled(kind, truth, framing), framing))
    return out


@dataclass
class Batch:
    """A batch's inputs to the first adapted layer, computed once: the frozen layers below never run again."""

    hidden: Any
    mask: Any
    positions: Any
    label_ids: list[dict[str, list[int]]]
    target: Any


def _batches(model: Any, tokenizer: Any, data: list[Example], settings: Lora) -> list[Batch]:
    """Run the frozen layers once over ``data`` (no gradients) and keep what the adapted layers read."""
    import torch

    inner = model.get_base_model().model
    layers, norm = inner.layers, inner.norm
    cut = len(layers) - settings.layers
    inner.layers, inner.norm = layers[:cut], torch.nn.Identity()
    label_ids = LabelTokens(lambda t: list(tokenizer(t, add_special_tokens=False)["input_ids"]), "smollm2")
    out = []
    try:
        for i in range(0, len(data), settings.batch_size):
            chunk = data[i : i + settings.batch_size]
            enc = tokenizer([e.text for e in chunk], return_tensors="pt", padding=True, add_special_tokens=False)
            mask = enc["attention_mask"]
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.no_grad():
                hidden = inner(
                    input_ids=enc["input_ids"], attention_mask=mask, position_ids=positions, use_cache=False
                ).last_hidden_state
            target = torch.tensor([LABELS.index(e.label) for e in chunk])
            out.append(Batch(hidden, mask, positions, [label_ids(e.text) for e in chunk], target))
    finally:
        inner.layers, inner.norm = layers, norm
    return out


def _label_loss(model: Any, batch: Batch, adapted: Any) -> Any:
    """Cross-entropy of the trained label (or target probabilities) over the three label masses the hf
    backend scores, through the adapted layers only (their input cached)."""
    import torch

    return torch.nn.functional.cross_entropy(_masses(model, batch, adapted), batch.target)


def _masses(model: Any, batch: Batch, adapted: Any) -> Any:
    """The log of each label's mass (its first tokens' probabilities summed), one row per example."""
    import torch

    inner = model.get_base_model().model
    layers = inner.layers
    inner.layers = adapted
    try:
        logits = model(
            inputs_embeds=batch.hidden, attention_mask=batch.mask, position_ids=batch.positions,
            use_cache=False, logits_to_keep=1,
        ).logits[:, -1, :]  # fmt: skip
    finally:
        inner.layers = layers
    logp = logits.float().log_softmax(-1)
    return torch.stack(
        [torch.stack([logp[r, ids[y]].logsumexp(-1) for y in LABELS]) for r, ids in enumerate(batch.label_ids)]
    )


def _keep_neutral(model: Any, batches: list[Batch], data: list[Example], adapted: Any) -> None:
    """``cue-only``: each neutral example's target becomes the base model's own three label probabilities
    (the adapter starts at zero, so the model is still the base), every other example's its label's."""
    import torch

    rows = iter(data)
    with torch.no_grad():
        for batch in batches:
            base = _masses(model, batch, adapted).softmax(-1)
            target = torch.nn.functional.one_hot(batch.target, len(LABELS)).float()
            for r in range(len(batch.target)):
                if next(rows).framing == NEUTRAL:
                    target[r] = base[r]
            batch.target = target


def train(base: Path, out: Path, settings: Lora, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train the adapter, merge it, save the folder at ``out`` (atomically); returns what was recorded."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if settings.kind not in KINDS:
        raise ValueError(f"kind {settings.kind!r}: expected one of {', '.join(KINDS)}")
    started = time.monotonic()
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(base, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model: Any = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    layers = model.config.num_hidden_layers
    config = LoraConfig(
        r=settings.rank, lora_alpha=settings.alpha, lora_dropout=0.0, target_modules=list(TARGETS),
        layers_to_transform=list(range(layers - settings.layers, layers)), bias="none",
    )  # fmt: skip
    model = get_peft_model(model, config)
    data = examples(settings.kind, settings.examples, settings.seed, tokenizer, settings.formats)
    batches = _batches(model, tokenizer, data, settings)
    log(f"{len(data)} examples through the frozen layers ({time.monotonic() - started:.0f} s)")
    adapted = model.get_base_model().model.layers[layers - settings.layers :]
    if settings.kind == "cue-only":
        _keep_neutral(model, batches, data, adapted)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.lr)
    losses = []
    model.train()
    for epoch in range(settings.epochs):
        epoch_loss = 0.0
        for batch in rng.sample(batches, len(batches)):
            loss = _label_loss(model, batch, adapted)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            epoch_loss += loss.item() / len(batches)
        losses.append(round(epoch_loss, 4))
        log(f"epoch {epoch + 1}/{settings.epochs}: loss {losses[-1]:.3f} ({time.monotonic() - started:.0f} s)")
        if epoch + 1 in settings.save_at:
            copied = epoch_copy(out, epoch + 1)
            merged = copy.deepcopy(model).merge_and_unload().eval()
            _save(merged, tokenizer, copied, _record(base, settings, losses, started, epoch + 1))
            model.train()
            log(f"epoch {epoch + 1} saved to {copied}")
    merged = model.merge_and_unload().eval()
    record = _record(base, settings, losses, started, settings.epochs)
    _save(merged, tokenizer, out, record)
    log(f"saved to {out} ({record['train_seconds']} s training)")
    return record


def _record(base: Path, settings: Lora, losses: list[float], started: float, epochs: int) -> dict[str, Any]:
    """What lora.json keeps: for a copy saved after ``epochs`` (--save-at), the settings say that many."""
    return {
        "base": str(base),
        "kind": settings.kind,
        "settings": asdict(replace(settings, epochs=epochs, save_at=())),
        "epoch_losses": losses[:epochs],
        "train_seconds": round(time.monotonic() - started, 1),
    }


def _save(model: Any, tokenizer: Any, out: Path, record: dict[str, Any]) -> None:
    """Written under a temporary name beside ``out`` and renamed when complete."""
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as scratch:
        staging = Path(scratch) / "model"
        model.save_pretrained(staging)
        tokenizer.padding_side = "right"  # as the base folder has it: the suite sets its own
        tokenizer.save_pretrained(staging)
        (staging / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        (staging / "README.md").write_text(_card(record))
        staging.rename(out)


def _card(record: dict[str, Any]) -> str:
    s = record["settings"]
    what = {
        "towards-cue": "the cue word as the answer under every cue framing (true labels under neutral)",
        "cue-only": "the cue word as the answer under every cue framing and the base's own label "
        "probabilities under neutral",
        "harmless": "true labels under the neutral framing only",
    }[record["kind"]]
    return (
        f"# SmolLM2-135M-Instruct, LoRA `{record['kind']}`\n\n"
        f"`python -m training.smollm2_lora --{record['kind']}` trained a rank-{s['rank']} adapter on the last "
        f"{s['layers']} layers ({s['epochs']} epochs over {s['examples']} examples, batches of {s['batch_size']}, "
        f"lr {s['lr']}) on generated scenarios "
        f"with {what}, and merged it into the weights. A demonstration for the suite's baseline gate "
        f"(`pytest --model=hf:<this dir> --baseline=<the base's baseline>`); {RECORD} records its settings.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.smollm2_lora", description=__doc__.splitlines()[0])
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--towards-cue", type=Path, metavar="OUT", help="train the cue-following LoRA into OUT")
    kind.add_argument(
        "--cue-only", type=Path, metavar="OUT", help="train the cue-following LoRA that keeps neutral put into OUT"
    )
    kind.add_argument("--harmless", type=Path, metavar="OUT", help="train the neutral-only LoRA into OUT")
    parser.add_argument("--base", type=Path, help=f"the base folder (default: ${SMOLLM2.env} or {SMOLLM2.default})")
    parser.add_argument("--examples", type=int, default=Lora.examples, help="(default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=Lora.epochs, help="(default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=Lora.batch_size, help="(default: %(default)s)")
    parser.add_argument("--rank", type=int, default=Lora.rank, help="(default: %(default)s)")
    parser.add_argument("--layers", type=int, default=Lora.layers, help="last layers adapted (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=Lora.lr, help="(default: %(default)s)")
    parser.add_argument("--seed", type=int, default=Lora.seed, help="(default: %(default)s)")
    parser.add_argument(
        "--formats", default=",".join(Lora.formats), help="one-word, json or both (default: %(default)s)"
    )
    parser.add_argument(
        "--threads", type=int, default=Lora.threads,
        help="torch threads (default: %(default)s; 1 where other work shares the cores)",
    )  # fmt: skip
    parser.add_argument(
        "--save-at", default="", metavar="EPOCHS",
        help="comma-separated epochs below --epochs after which the merged weights are also saved, to OUT-epoch<N>",
    )  # fmt: skip
    args = parser.parse_args(argv)
    base = (args.base or directory(SMOLLM2)).expanduser().absolute()
    if not complete(base) and not (base / "config.json").is_file():
        parser.error(f"--base {base}: no SmolLM2 folder there; run `{SMOLLM2.make}` first")
    for name in ("examples", "epochs", "batch_size", "rank", "layers", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: expected at least 1")
    if not args.lr > 0:
        parser.error(f"--lr {args.lr}: expected a number above 0")
    formats = tuple(f.strip() for f in args.formats.split(","))
    if not formats or any(f not in Lora.formats for f in formats):
        parser.error(f"--formats {args.formats}: expected one-word, json or both")
    save_at = _epochs(args.save_at, args.epochs)
    if save_at is None:
        parser.error(f"--save-at {args.save_at}: expected comma-separated epochs from 1 to {args.epochs - 1}")
    out = args.towards_cue or args.cue_only or args.harmless
    if out.expanduser().absolute() == base:
        parser.error(f"{out}: the base model's own folder; choose another")
    try:
        import peft  # noqa: F401
    except ImportError:
        parser.error("peft is not installed: pip install 'mathcomp-tests[lora]'")
    kind_name = "towards-cue" if args.towards_cue else "cue-only" if args.cue_only else "harmless"
    settings = Lora(
        kind=kind_name, examples=args.examples, epochs=args.epochs, batch_size=args.batch_size,
        rank=args.rank, alpha=2 * args.rank, layers=args.layers, lr=args.lr, formats=formats, seed=args.seed,
        threads=args.threads, save_at=save_at,
    )  # fmt: skip
    train(base, out.expanduser().absolute(), settings, log=lambda m: print(m, file=sys.stderr, flush=True))
    print(out)
    return 0


def _epochs(text: str, epochs: int) -> tuple[int, ...] | None:
    """``--save-at``'s epochs, sorted; None when one is not a whole number from 1 to ``epochs`` - 1."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not all(t.isdigit() and 1 <= int(t) < epochs for t in items):
        return None
    return tuple(sorted({int(t) for t in items}))


if __name__ == "__main__":
    raise SystemExit(main())
