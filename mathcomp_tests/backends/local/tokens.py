"""What a model's own tokenizer decides, for every backend that renders prompts itself (hf, vllm,
batched completions): the exact text the model reads, and the token ids that start each label."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ... import formats
from ...types import LABELS, Label, Prompt
from ..base import BackendError

SCORINGS = ("generate", "logprob")
CHAT_TEMPLATES = ("auto", "none")

Encode = Callable[[str], list[int]]


def uses_template(tokenizer: Any, mode: str) -> bool:
    """Whether prompts go through the tokenizer's chat template (`auto` and the tokenizer has one)."""
    return mode == "auto" and bool(getattr(tokenizer, "chat_template", None))


def render(tokenizer: Any, prompt: Prompt, template: bool) -> str:
    """The exact text the model reads: the chat template applied, generation prompt added; without a
    template, a protocol's turns as one transcript."""
    if not template:
        return "\n\n".join(m.content for m in prompt.messages)
    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
    return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))


def scores_labels(scoring: str, prompt: Prompt) -> bool:
    """True when ``prompt`` is answered by label log-probabilities rather than by generation: --scoring
    is logprob, the prompt asks for the label (not a protocol's totals, yes/no or rewrite turn), and its
    format places the label where it can be scored."""
    scorable = formats.get(prompt.condition.format).logprob_prefix is not None
    return scoring == "logprob" and prompt.asks == "label" and scorable


def spellings(label: str) -> list[str]:
    words = (label, label.capitalize(), label.upper())
    return [w for word in words for w in (word, " " + word)]


class LabelTokens:
    """Token ids that start each label right after a text, found by tokenising in that context.

    Every spelling counts (bare, after a space, capitalised, upper case), and so does its first token
    when the spelling takes several (``m`` of ``m|ore``); a token that starts two labels counts for
    neither. Cached by the end of the text, which the chat template's generation prompt fixes.
    """

    def __init__(self, encode: Encode, model_id: str):
        self.encode = encode
        self.model_id = model_id
        self._found: dict[str, dict[str, list[int]]] = {}

    def __call__(self, text: str) -> dict[str, list[int]]:
        tail = text[-64:]
        if tail not in self._found:
            base = self.encode(tail)
            first: dict[str, set[int]] = {y: set() for y in LABELS}
            for y in LABELS:
                for variant in spellings(y):
                    ids = self.encode(tail + variant)
                    if ids[: len(base)] == base and len(ids) > len(base):
                        first[y].add(ids[len(base)])
            shared = {t for y in LABELS for t in first[y] if any(t in first[o] for o in LABELS if o != y)}
            found: dict[str, list[int]] = {y: sorted(first[y] - shared) for y in LABELS}
            missing = [y for y in LABELS if not found[y]]
            if missing:
                raise BackendError(
                    f"{self.model_id}: no token starts the label(s) {', '.join(missing)} after "
                    f"{tail[-20:]!r} without starting another; use --scoring=generate"
                )
            self._found[tail] = found
        return self._found[tail]


def label_probs(mass: Mapping[Label, float]) -> tuple[dict[str, float], str]:
    """The three label masses normalised to probabilities, and the most probable label (ties go to the
    first in LABELS order); no mass at all is uniform."""
    total = sum(mass.values())
    probs: dict[str, float] = {y: (mass[y] / total if total > 0 else 1 / len(LABELS)) for y in LABELS}
    label: str = max(LABELS, key=lambda y: probs[y])
    return probs, label


GENERIC_TOKENIZERS = frozenset({"PreTrainedTokenizerFast", "TokenizersBackend"})
"""tokenizer_config.json classes that are transformers' generic fast tokenizer (the same class in
transformers 5): what AutoTokenizer would load for them anyway."""


def generic_tokenizer(source: str) -> bool:
    """True when ``source`` is a local model directory whose tokenizer_config.json names the generic fast
    tokenizer; a hub id, or any other class (a model's own tokenizer), is left to AutoTokenizer."""
    config = Path(source) / "tokenizer_config.json"
    try:
        named = json.loads(config.read_text(encoding="utf-8")).get("tokenizer_class")
    except (OSError, ValueError, AttributeError):
        return False
    return named in GENERIC_TOKENIZERS
