"""Power of the baseline gate on SmolLM2: ``python -m benchmarks.gate_power_smollm2 [--work DIR] [--analyse-only]``.

Trains the project's LoRA recipe (training/smollm2_lora.py) towards the cue at several strengths (one run,
merged weights saved after 1, 2, 4 and 6 epochs), a cue-follower that keeps neutral put (``--cue-only``)
and harmless fine-tunes with different seeds; asks the base and every fine-tune the 300 bundled scenarios
under neutral, direct-more, direct-less and direct-equal (question at the end, one-word, label
probabilities: 1,200 prompts each); then, with no more inference, measures how often the gate's hard and
soft tests find each fine-tune's change on random subsets of 30 and 100 scenarios and on all 300
(benchmarks/gate_power_analysis.py). Writes reports/benchmarks/gate_power_smollm2.{json,md}.

Why it is cheap enough for two busy cores: every LoRA adapts only the last 2 of SmolLM2's 30 layers, so the
28 layers below are the base's own weights in every fine-tune (checked tensor by tensor). Their output for
the 1,200 prompts is computed once and kept on disk; each model then runs only its last 2 layers, the
final norm and the head over it: the hf backend's label scoring (same prompts, same left-padded batches,
same label tokens), a 15th of a full pass. A sample of prompts per model is also scored through the hf
backend itself and the largest difference in a probability is recorded.

Everything is kept in the work folder (default ~/.cache/mathcomp-tests/gate-power): the fine-tunes, the
kept layer outputs, one answers/<model>.jsonl per model (case, scenario, gold, label, probs) and the
times; a killed run resumes where it stopped. ``--analyse-only`` re-reads the stored answers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import gate_power_analysis, gate_power_report
from benchmarks.common import OUT_DIR, load, machine, write_json
from mathcomp_tests import prompts
from mathcomp_tests.backends import models
from mathcomp_tests.backends.local.prepared import SMOLLM2, complete, directory
from mathcomp_tests.backends.local.tokens import LabelTokens, label_probs, render
from mathcomp_tests.data import scenarios as scenario_file
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.paths import fixtures
from mathcomp_tests.types import LABELS, Condition, Label, Prompt
from training.smollm2_lora import RECORD, Lora, epoch_copy, train

NAME = "gate_power_smollm2"
WORK = Path("~/.cache/mathcomp-tests/gate-power")
FRAMINGS = ("neutral", "direct-more", "direct-less", "direct-equal")
FORMAT = "one-word"
BATCH = 16
"""Prompts per forward pass: the hf backend's automatic start on the CPU."""
THREADS = 1
"""Torch threads. On 2 cores shared with other work, 2 threads spend most of their time waiting for each
other (measured at load 9.6: 4 scenarios' shared layers took 57 s of CPU and 267 s of wall time with 2
threads, 11 s and 77 s with 1)."""
CHECKED = 6
"""Prompts per model also scored through the hf backend itself."""
BASE = "base"
HARMLESS_SEEDS = (1, 2, 3, 4, 5)
HARMLESS_EPOCHS = 3


@dataclass(frozen=True)
class Training:
    """One training run and the models it leaves: its folder, and one per --save-at epoch."""

    name: str
    settings: Lora

    def models(self) -> list[str]:
        return [f"{self.name}-epoch{n}" for n in self.settings.save_at] + [self.name]


TRAININGS = (
    Training("towards-cue", Lora("towards-cue", save_at=(1, 2, 4), threads=THREADS)),
    Training("cue-only", Lora("cue-only", threads=THREADS)),
    *(
        Training(f"harmless-seed{s}", Lora("harmless", epochs=HARMLESS_EPOCHS, seed=s, threads=THREADS))
        for s in HARMLESS_SEEDS
    ),
)


@dataclass(frozen=True)
class Item:
    case: str
    scenario: str
    gold: str
    prompt: Prompt


def items() -> list[Item]:
    """The 4 cases x 300 bundled scenarios, as the suite builds them for ``--model=smollm2-135m``."""
    prompt_set = prompts.load_prompt_set(models.resolve(SMOLLM2.alias).prompt_set)
    names = prompts.std_names(prompt_set)
    chosen = scenario_file.load(fixtures() / "scenarios.csv")
    out = []
    for framing in FRAMINGS:
        condition = Condition(framing, "end", "std", FORMAT)
        for s in chosen:
            out.append(Item(condition.id, s.id, s.label, prompts.build(s, condition, prompt_set, names)))
    return out


class Timings:
    """Wall and CPU seconds (this process, all its threads) and the load around each step, kept in the
    work folder across resumed runs."""

    def __init__(self, path: Path):
        self.path = path
        self.steps: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        before, wall, cpu = load(), time.perf_counter(), time.process_time()
        yield
        self.steps[name] = {
            "wall_s": round(time.perf_counter() - wall, 1),
            "cpu_s": round(time.process_time() - cpu, 1),
            "load_before": before,
            "load_after": load(),
        }
        _write(self.path, json.dumps(self.steps, indent=1) + "\n")


def _write(path: Path, text: str) -> None:
    """Written beside ``path`` and renamed: a killed run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.part")
    scratch.write_text(text)
    scratch.replace(path)


class Scorer:
    """The base's first 28 layers run once over every prompt (kept on disk); any model that shares them
    is then scored through its last layers only, as the hf backend scores labels."""

    def __init__(self, base: Path, work: Path, chosen: list[Item], log: Callable[[str], None]):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(THREADS)
        self.torch, self.log = torch, log
        self.tokenizer = AutoTokenizer.from_pretrained(base, padding_side="left")
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.base = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32).eval()
        self.cut = self.base.config.num_hidden_layers - Lora.layers
        prefix = FORMATS[FORMAT].logprob_prefix or ""
        self.texts = [render(self.tokenizer, it.prompt, True) + prefix for it in chosen]
        self.ids = [list(ids) for ids in self.tokenizer(self.texts, add_special_tokens=False)["input_ids"]]
        label_ids = LabelTokens(lambda t: list(self.tokenizer(t, add_special_tokens=False)["input_ids"]), "smollm2")
        self.label_ids = [label_ids(t) for t in self.texts]
        groups: dict[str, list[int]] = {}
        for i, it in enumerate(chosen):
            groups.setdefault(it.scenario, []).append(i)
        self.groups = list(groups.values())
        """One scenario's items: their prompts differ only after the framed question begins."""
        self.batches = self._plan()
        self.folder = work / "hidden"
        self._hidden: list[Any] = []

    def _plan(self) -> list[list[int]]:
        """Longest prompts first, in even batches of at most BATCH (the hf backend's order)."""
        order = sorted(range(len(self.ids)), key=lambda i: -len(self.ids[i]))
        batches, start = [], 0
        while start < len(order):
            left = len(order) - start
            size = math.ceil(left / math.ceil(left / BATCH))
            batches.append(order[start : start + size])
            start += size
        return batches

    def _file(self, g: int) -> Path:
        return self.folder / f"{g:03d}.pt"

    def kept(self) -> bool:
        return self._current() and all(self._file(g).is_file() for g in range(len(self.groups)))

    def _current(self) -> bool:
        plan = self.folder / "plan.json"
        return plan.is_file() and plan.read_text() == self._wanted()

    def _wanted(self) -> str:
        return json.dumps({"ids": hash_of(self.ids), "cut": self.cut, "groups": self.groups})

    def frozen_pass(self) -> None:
        """The shared layers' output for every scenario not kept yet (a stale plan is recomputed)."""
        if not self._current():
            for old in self.folder.glob("*.pt"):
                old.unlink()
            _write(self.folder / "plan.json", self._wanted())
        inner = self.base.model
        layers, norm = inner.layers, inner.norm
        inner.layers, inner.norm = layers[: self.cut], self.torch.nn.Identity()
        try:
            for g, rows in enumerate(self.groups):
                if self._file(g).is_file():
                    continue
                scratch = self._file(g).with_suffix(".part")
                self.torch.save(self._shared_prefix(inner, rows), scratch)
                scratch.replace(self._file(g))
                if (g + 1) % 25 == 0:
                    self.log(f"  shared layers: {g + 1} of {len(self.groups)} scenarios")
        finally:
            inner.layers, inner.norm = layers, norm

    def _shared_prefix(self, inner: Any, rows: list[int]) -> list[Any]:
        """The hidden states at the cut of one scenario's prompts: their common token prefix (the system
        turn and the scenario's text) runs once, and its keys and values serve each prompt's own tail."""
        from transformers import DynamicCache

        torch = self.torch
        ids = [self.ids[i] for i in rows]
        p = len(os.path.commonprefix(ids))
        p = min(p, min(len(x) for x in ids) - 1)
        tails = [x[p:] for x in ids]
        width = max(len(t) for t in tails)
        pad = self.tokenizer.pad_token_id
        with torch.inference_mode():
            cache = DynamicCache(config=self.base.config)
            head = inner(
                input_ids=torch.tensor([ids[0][:p]]), position_ids=torch.arange(p)[None],
                past_key_values=cache, use_cache=True,
            ).last_hidden_state[0]  # fmt: skip
            cache.batch_repeat_interleave(len(rows))
            out = inner(
                input_ids=torch.tensor([t + [pad] * (width - len(t)) for t in tails]),
                attention_mask=torch.tensor([[1] * (p + len(t)) + [0] * (width - len(t)) for t in tails]),
                position_ids=torch.arange(p, p + width).expand(len(rows), -1),
                past_key_values=cache, use_cache=True,
            ).last_hidden_state  # fmt: skip
        return [torch.cat([head, out[r, : len(t)]]).clone() for r, t in enumerate(tails)]

    def hidden(self) -> list[Any]:
        """Every prompt's hidden states at the cut, read once from the work folder."""
        if not self._hidden:
            self._hidden = [None] * len(self.ids)
            for g, rows in enumerate(self.groups):
                for i, h in zip(rows, self.torch.load(self._file(g)), strict=True):
                    self._hidden[i] = h
        return self._hidden

    def shares_layers(self, model: Any) -> list[str]:
        """The tensors of ``model`` below the cut (and the embeddings) that differ from the base's."""
        ours, theirs = self.base.state_dict(), model.state_dict()
        adapted = tuple(f"model.layers.{i}." for i in range(self.cut, self.base.config.num_hidden_layers))
        return [
            k for k, t in ours.items()
            if not k.startswith(adapted) and not k.startswith("model.norm") and not self.torch.equal(t, theirs[k])
        ]  # fmt: skip

    def score(self, model: Any) -> list[tuple[dict[str, float], str]]:
        """Every prompt's three label probabilities and answer through ``model``'s last layers, in the texts'
        order: the hf backend's batches, left-padded."""
        torch = self.torch
        hidden = self.hidden()
        inner = model.model
        layers = inner.layers
        out: list[tuple[dict[str, float], str]] = [({}, "") for _ in self.ids]
        inner.layers = layers[self.cut :]
        try:
            for rows in self.batches:
                width = max(len(self.ids[i]) for i in rows)
                states = torch.zeros(len(rows), width, hidden[rows[0]].shape[-1])
                mask = torch.zeros(len(rows), width, dtype=torch.long)
                for r, i in enumerate(rows):
                    n = len(self.ids[i])
                    states[r, width - n :], mask[r, width - n :] = hidden[i], 1
                with torch.inference_mode():
                    logits = model(
                        inputs_embeds=states, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                        use_cache=False, logits_to_keep=1,
                    ).logits  # fmt: skip
                probs_all = logits[:, -1, :].float().softmax(-1)
                for r, i in enumerate(rows):
                    ids = self.label_ids[i]
                    mass: dict[Label, float] = {y: float(probs_all[r, ids[y]].sum()) for y in LABELS}
                    out[i] = label_probs(mass)
        finally:
            inner.layers = layers
        return out


def hash_of(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:16]


def answer_file(work: Path, name: str) -> Path:
    return work / "answers" / f"{name}.jsonl"


def answer(name: str, folder: Path, scorer: Scorer, chosen: list[Item], work: Path, timings: Timings) -> None:
    """Score every prompt with the model in ``folder`` and keep its answers; check a sample against the
    hf backend."""
    import torch
    from transformers import AutoModelForCausalLM

    target = answer_file(work, name)
    if target.is_file():
        return
    with timings.step(f"answer {name}"):
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
        differ = scorer.shares_layers(model)
        if differ:
            raise SystemExit(f"{folder}: {len(differ)} tensors below the adapted layers differ from the base's, "
                             f"e.g. {differ[0]}; the shared layers' output cannot be reused")  # fmt: skip
        scored = scorer.score(model)
        del model
    rows = [
        {"case": it.case, "scenario": it.scenario, "gold": it.gold, "label": label, "probs": p}
        for it, (p, label) in zip(chosen, scored, strict=True)
    ]
    with timings.step(f"check {name}"):
        check = backend_check(folder, chosen, [p for p, _ in scored])
    _write(work / "answers" / f"{name}.check.json", json.dumps(check, indent=1) + "\n")
    _write(target, "".join(json.dumps(r) + "\n" for r in rows))
    scorer.log(f"  {name}: answered; the hf backend differs by at most {check['max_abs_diff']:.2e}")


def backend_check(folder: Path, chosen: list[Item], probs: list[dict[str, float]]) -> dict[str, Any]:
    """CHECKED prompts (a fixed draw across the cases) scored by the project's hf backend itself."""
    from mathcomp_tests.backends.local.hf import HFBackend
    from mathcomp_tests.settings import BackendOptions
    from mathcomp_tests.types import Decoding

    picked = sorted(random.Random(20261125).sample(range(len(chosen)), CHECKED))
    backend = HFBackend(str(folder), BackendOptions(device="cpu", scoring="logprob"))
    responses = backend.complete([chosen[i].prompt for i in picked], Decoding(max_new_tokens=8))
    backend.close()
    diffs = []
    for i, response in zip(picked, responses, strict=True):
        theirs: Any = response.meta["probs"]
        diffs.append(max(abs(float(theirs[y]) - probs[i][y]) for y in LABELS))
    return {"items": [f"{chosen[i].case}/{chosen[i].scenario}" for i in picked], "max_abs_diff": max(diffs)}


def trained(work: Path, training: Training, base: Path, timings: Timings, log: Callable[[str], None]) -> None:
    """Train the run unless every folder it leaves is complete already."""
    out = work / "models" / training.name
    folders = [epoch_copy(out, n) for n in training.settings.save_at] + [out]
    if all((f / RECORD).is_file() for f in folders):
        return
    with timings.step(f"train {training.name}"):
        train(base, out, training.settings, log=lambda m: log(f"  {training.name}: {m}"))


def collect(work: Path, log: Callable[[str], None]) -> None:
    """Every model's answers, resuming from whatever the work folder keeps."""
    base = directory(SMOLLM2)
    if not complete(base):
        raise SystemExit(f"SmolLM2 is not prepared at {base}: run `{SMOLLM2.make}` first")
    chosen = items()
    timings = Timings(work / "timings.json")
    with timings.step("load and render"):
        scorer = Scorer(base, work, chosen, log)
    if not scorer.kept():
        with timings.step("shared layers"):
            scorer.frozen_pass()
    answer(BASE, base, scorer, chosen, work, timings)
    for training in TRAININGS:
        trained(work, training, base, timings, log)
        for name in training.models():
            answer(name, work / "models" / name, scorer, chosen, work, timings)


def model_names() -> list[str]:
    return [name for training in TRAININGS for name in training.models()]


def trainings_of(work: Path) -> dict[str, Any]:
    """Each fine-tune's lora.json: kind, settings, loss per epoch, training seconds."""
    out = {}
    for name in model_names():
        record = work / "models" / name / RECORD
        if record.is_file():
            out[name] = json.loads(record.read_text())
    return out


def checks_of(work: Path) -> dict[str, float]:
    """Per model, the largest difference in a probability between this scoring and the hf backend's."""
    out = {}
    for path in sorted((work / "answers").glob("*.check.json")):
        out[path.name.removesuffix(".check.json")] = json.loads(path.read_text())["max_abs_diff"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.gate_power_smollm2", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--work", type=Path, default=WORK, help="where models, answers and times are kept (default: %(default)s)"
    )
    parser.add_argument(
        "--analyse-only", action="store_true", help="no training or inference: read the stored answers"
    )
    args = parser.parse_args(argv)
    work = args.work.expanduser().absolute()

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}", file=sys.stderr, flush=True)

    before, started = load(), time.perf_counter()
    if not args.analyse_only:
        collect(work, log)
    if not answer_file(work, BASE).is_file():
        raise SystemExit(f"{answer_file(work, BASE)}: no stored answers of the base; run without --analyse-only first")
    with Timings(work / "timings.json").step("analysis"):
        result = gate_power_analysis.analyse(work / "answers", model_names(), BASE, log)
    result.update(
        work=str(work), machine=machine(), load_before=before, load_after=load(),
        seconds=round(time.perf_counter() - started, 1), timings=Timings(work / "timings.json").steps,
        trainings=trainings_of(work), backend_check=checks_of(work),
    )  # fmt: skip
    write_json(NAME, result)
    text = gate_power_report.markdown(result)
    (OUT_DIR / f"{NAME}.md").write_text(text)
    print(text)
    print(f"written: reports/benchmarks/{NAME}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
