"""How benchmarks/gate_power_smollm2.py scores SmolLM2 and its fine-tunes: the base's shared layers run once
over every prompt and are kept on disk; each model then runs only the layers a LoRA adapts, as the hf backend
scores labels (same prompts, same left-padded batches, same label tokens)."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mathcomp_tests.backends.local.tokens import LabelTokens, label_probs, render
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.types import LABELS, Label, Prompt
from training.smollm2_lora import Lora

FORMAT = "one-word"
BATCH = 16
"""Prompts per forward pass: the hf backend's automatic start on the CPU."""
THREADS = 1
"""Torch threads. On 2 cores shared with other work, 2 threads spend most of their time waiting for each
other (measured at load 9.6: 4 scenarios' shared layers took 57 s of CPU and 267 s of wall time with 2
threads, 11 s and 77 s with 1)."""


@dataclass(frozen=True)
class Item:
    """One prompt the benchmark asks every model, with the case and scenario it belongs to."""

    case: str
    scenario: str
    gold: str
    prompt: Prompt


def write_atomic(path: Path, text: str) -> None:
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
            write_atomic(self.folder / "plan.json", self._wanted())
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
