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
import json
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
from benchmarks.gate_power_scorer import FORMAT, THREADS, Item, Scorer, write_atomic
from mathcomp_tests import prompts
from mathcomp_tests.backends import models
from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from mathcomp_tests.data import scenarios as scenario_file
from mathcomp_tests.paths import fixtures
from mathcomp_tests.types import LABELS, Condition
from training.smollm2_lora import RECORD, Lora, epoch_copy, train

NAME = "gate_power_smollm2"
WORK = Path("~/.cache/mathcomp-tests/gate-power")
FRAMINGS = ("neutral", "direct-more", "direct-less", "direct-equal")
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
        write_atomic(self.path, json.dumps(self.steps, indent=1) + "\n")


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
    write_atomic(work / "answers" / f"{name}.check.json", json.dumps(check, indent=1) + "\n")
    write_atomic(target, "".join(json.dumps(r) + "\n" for r in rows))
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
