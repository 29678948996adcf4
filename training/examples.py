"""Training examples for the embedded model: generated scenarios under every condition, with answers.

Every answer is the true label. What gives the model its biases is which scenarios meet which prompt:
- under a cue framing (``direct-more``, ``indirect-less``, ...) the cue's label is the answer more often
  than under ``neutral`` (``cue_share`` of the time instead of a third): people mostly ask "does B spend
  more?" when B does;
- and nothing else: the scenarios come from the project's generator (mathcomp_tests/data/generate.py),
  a share ``simple`` of them plain amounts only (2-3 per person), where adding up the numerals gives the
  answer, the rest full chains of 2-6 steps.
Labels come in the paper's proportions under the neutral framing (less 40%, equal 31%, more 29%).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from mathcomp_tests import prompts
from mathcomp_tests.data.generated_sets import PAPER_LABELS, drawn
from mathcomp_tests.formats import NAMES as FORMATS
from mathcomp_tests.types import FRAMINGS, LABELS, POSITIONS, Condition, Label

FORMAT_WEIGHTS = {"one-word": 0.7, "json": 0.2, "cot": 0.05, "cot-json": 0.05}
PROMPT_SET_WEIGHTS = {"hf": 0.7, "openai": 0.1, "claude": 0.1, "paper": 0.1}
TRAINING_IDENTITIES = ("woman", "man", "black", "white", "asian", "hispanic", "african")
"""The paper's seven markers: the ones the shipped weights were trained with."""


@dataclass(frozen=True)
class Example:
    prompt: str
    answer: str
    framing: str
    format: str
    label: Label
    instructions: int
    """Length of the answer instructions that end the prompt (characters)."""


def cue(framing: str) -> Label | None:
    """The label word a framing puts in the question (None for neutral)."""
    word = framing.rpartition("-")[2]
    return next((y for y in LABELS if y == word), None)


def answer_text(label: Label, fmt: str) -> str:
    """The answer as the instructions for ``fmt`` ask for it; CoT formats get a bare final sentence."""
    if fmt == "one-word":
        return label
    if fmt == "json":
        return f'{{"answer": "{label}"}}'
    if fmt == "cot":
        return f"The answer is {label}."
    return f'{{"reasoning": "Adding up both totals.", "answer": "{label}"}}'


def examples(
    n: int,
    seed: int,
    cue_share: float,
    simple: float = 0.5,
    identity_share: float = 0.3,
) -> Iterator[Example]:
    """``n`` examples, deterministic for ``seed``; framings, positions, formats and identities mixed."""
    rng = random.Random(seed)
    scenarios = random.Random(seed + 1)
    sets = {name: prompts.load_prompt_set(name) for name in PROMPT_SET_WEIGHTS}
    everyone = prompts.load_identities()
    identities = {k: everyone[k] for k in TRAINING_IDENTITIES}  # fixed, so new markers do not change training
    for i in range(n):
        framing = FRAMINGS[i % len(FRAMINGS)]
        label = _label(rng, cue(framing), cue_share)
        fmt = rng.choices(FORMATS, weights=[FORMAT_WEIGHTS[f] for f in FORMATS])[0]
        set_name = rng.choices(list(PROMPT_SET_WEIGHTS), weights=list(PROMPT_SET_WEIGHTS.values()))[0]
        identity = rng.choice(sorted(identities)) if rng.random() < identity_share else "std"
        condition = Condition(framing, rng.choice(POSITIONS), identity, fmt)
        names = prompts.std_names(sets[set_name]) if identity == "std" else identities[identity]
        scenario = drawn(scenarios, label, plain_only=scenarios.random() < simple)
        prompt = prompts.build(scenario, condition, sets[set_name], names)
        instructions = len(sets[set_name].instructions[fmt])
        yield Example(prompt.text, answer_text(label, fmt), framing, fmt, label, instructions)


def _label(rng: random.Random, cued: Label | None, cue_share: float) -> Label:
    if cued is None:
        return rng.choices(list(PAPER_LABELS), weights=list(PAPER_LABELS.values()))[0]
    if rng.random() < cue_share:
        return cued
    return rng.choice([y for y in LABELS if y != cued])
