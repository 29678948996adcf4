"""Values that flow through a run, from scenario to prediction: small frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

Label = Literal["less", "more", "equal"]
LABELS: tuple[Label, ...] = ("less", "more", "equal")

FRAMINGS: tuple[str, ...] = (
    "neutral",
    "direct-more",
    "direct-less",
    "direct-equal",
    "indirect-more",
    "indirect-less",
    "indirect-equal",
)
"""The paper's seven framings: the default selection (14 cases with both positions)."""
PLACEBO_FRAMINGS: tuple[str, ...] = ("placebo-more", "placebo-less", "placebo-equal")
"""A comparative about other people and another quantity, then the neutral question: selectable with
--framings, never in the default selection."""
ALL_FRAMINGS: tuple[str, ...] = FRAMINGS + PLACEBO_FRAMINGS
NEUTRAL = "neutral"


def cue_label(framing: str) -> Label | None:
    """The label a framing's cue word names (`indirect-less` -> less); None for the neutral framing."""
    if framing == NEUTRAL:
        return None
    word = framing.rsplit("-", 1)[-1]
    if word not in LABELS:
        raise ValueError(f"framing {framing!r} names no cue label; expected one ending in -less, -more or -equal")
    return word
POSITIONS: tuple[str, ...] = ("begin", "end")
PAPER_ORDER = "lme"
"""Option orders are written by the labels' initials: `lme` is the paper's A) less B) more C) equal."""
OPTION_ORDERS: tuple[str, ...] = ("lme", "lem", "mle", "mel", "elm", "eml")
PLAIN = "plain"
"""The default protocol: the prompt as the authors ran it, one request (see mathcomp_tests/protocols)."""

Status = Literal["ok", "invalid", "error"]


@dataclass(frozen=True)
class Scenario:
    """One verified comparison: what A and B did, their exact totals and the gold label (B vs A)."""

    id: str
    text_a: str
    text_b: str
    expr_a: str
    expr_b: str
    total_a: Fraction
    total_b: Fraction
    label: Label
    category: str
    quantity: str
    task: str
    verbal: bool


@dataclass(frozen=True)
class Condition:
    """framing x position x identity x format; new dimensions get a field with a default."""

    framing: str
    position: str
    identity: str = "std"
    format: str = "one-word"
    options: str = PAPER_ORDER
    """The order of the lettered options (see OPTION_ORDERS); only a non-paper order shows in the id."""
    identity_on: str = "b"
    """Who carries the identity marker: b (the paper), a, or both; only a or both shows in the id."""
    protocol: str = PLAIN
    """How the model is asked (PROTOCOLS); only a protocol other than plain shows in the id."""

    @property
    def id(self) -> str:
        who = self.identity if self.identity_on == "b" else f"{self.identity}-on-{self.identity_on}"
        base = f"{self.framing}-{self.position}-{who}-{self.format}"
        base = base if self.options == PAPER_ORDER else f"{base}-options-{self.options}"
        return base if self.protocol == PLAIN else f"{base}-protocol-{self.protocol}"


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class Prompt:
    """The chat messages a model sees for one scenario under one condition."""

    scenario: Scenario
    condition: Condition
    messages: tuple[Message, ...]
    prompt_set: str
    person_a: str = "Person A"
    """How the question names Person A ("PERSON_A", "a person"): answers are read against these names."""
    person_b: str = "Person B"
    asks: str = "label"
    """What the last message asks for: `label` (the comparison, in the condition's format), `totals`
    (each person's total), `yes-no:more` / `yes-no:less` (one direction) or `rewrite` (a neutral question).
    A protocol's turns say it, so that a backend that answers from the scenario (symbolic) can serve them."""

    @property
    def text(self) -> str:
        """The user message (the whole prompt: no system message is sent)."""
        return self.messages[-1].content


@dataclass(frozen=True)
class Decoding:
    """Generation settings that change the output, and so belong in the cache key."""

    max_new_tokens: int
    temperature: float = 0.0
    seed: int | None = None
    """Sample number under --samples: K samples are K distinct cached answers (seeded where the backend
    allows: hf seeds torch per batch, the api backend sends `seed`). None keeps the key of an unseeded run."""

    def as_key(self) -> dict[str, float | int]:
        key: dict[str, float | int] = {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature}
        if self.seed is not None:
            key["seed"] = self.seed
        return key


@dataclass(frozen=True)
class Response:
    """What a backend returned for one prompt; `error` is set when no answer could be had."""

    text: str
    error: str | None = None
    cached: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    meta: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Prediction:
    """A parsed answer: a label, or `invalid` (unparseable) / `error` (no answer), raw text kept."""

    label: Label | None
    status: Status
    raw: str
    decided_by: str = field(default="", compare=False)
    """The rule that read the label, `judge`, or why no label was read (`invalid: ...`)."""


@dataclass(frozen=True)
class Turn:
    """One request a protocol sent: what it was for, the prompt (all messages so far) and the reply."""

    name: str
    prompt: Prompt
    response: Response


@dataclass(frozen=True)
class Item:
    """One scenario of a case answered and read: the prompt, the (last) response and its prediction."""

    prompt: Prompt
    response: Response
    prediction: Prediction
    judge_reply: Response | None = None
    """The judge's reply, when the rules declined this answer and a judge was asked."""
    sample: int = 0
    """Which of the case's samples (--samples) this answer is."""
    turns: tuple[Turn, ...] = ()
    """Every request a protocol other than plain sent for this item (``response`` is the last one's)."""
    note: str = ""
    """What the protocol noticed on this item (a disagreement, a rejected rewrite)."""
    read_as: str = ""
    """The format the label was read in, when a protocol read it in another than the case's."""

    @property
    def requests(self) -> tuple[Response, ...]:
        """Every response this item took (one under plain)."""
        return tuple(t.response for t in self.turns) or (self.response,)

    @property
    def wrong(self) -> bool:
        """Answered, and not with the gold label (failed requests are errors, not wrong answers)."""
        return self.prediction.status != "error" and self.prediction.label != self.prompt.scenario.label
