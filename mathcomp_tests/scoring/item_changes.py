"""What changed between two runs of one selection, item by item (`mathcomp diff`, the report's section).

Per case, each item both runs answered is classed by how its answer moved from the base (the earlier run,
or the baseline) to the candidate: to the cue word's label (the label the case's framing's cue word names:
the candidate answers it now, the base did not; not the gate's toward-cue rate, which compares a cue case
with its neutral partner in one run), off it (the reverse), right to wrong and wrong to right
by the gold; an item can be in two classes (to the cue word's label and right to wrong). A change that is none of
these (one wrong answer for another, no cue involved) is an ``other change``; under label scoring an item
whose answer stayed but whose label probabilities moved by PROBABILITY_STEP or more is ``probability
moved``. Per label, the counts are the paired test's (scoring/paired.py): among items whose gold is not y
and that neither run failed to answer, those newly answered y (``rose``) and those no longer (``fell``).

Pure logic on answers already read: records/answer_sets.py reads run folders and baseline files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from ..data.generated_draw import GENERATED_PREFIX, Draw
from ..listing import few, sides
from ..types import ALL_FRAMINGS, LABELS, cue_label

TOWARDS = "to the cue word's label"
AWAY = "off the cue word's label"
WORSE = "right to wrong"
BETTER = "wrong to right"
OTHER = "other change"
MOVED = "probability moved"
KINDS = (TOWARDS, AWAY, WORSE, BETTER, OTHER, MOVED)

PROBABILITY_STEP = 0.05
"""An answer that stayed counts as changed when a label's probability moved by at least this much (the
default max_increase: a move the gate would notice on a whole case)."""


@dataclass(frozen=True)
class Answer:
    """One run's answer to one item: its outcome (less, more, equal, invalid, error) and, where kept, the
    label probabilities (--scoring=logprob), the model's text and the prompt."""

    outcome: str
    probs: Mapping[str, float] | None = None
    raw: str | None = None
    prompt: str | None = None


AnswerSet = Mapping[str, Mapping[str, Answer]]
"""case id -> scenario id -> Answer."""


@dataclass(frozen=True)
class ItemChange:
    """One item of a case in both runs; ``kinds`` is empty when nothing changed."""

    scenario: str
    gold: str | None
    """None where neither side kept the gold (two baseline files without their dataset)."""
    cue: str | None
    base: Answer
    candidate: Answer
    kinds: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)

    def shift(self, label: str) -> float | None:
        """The candidate's probability of ``label`` minus the base's; None unless both runs kept it."""
        before, after = self.base.probs, self.candidate.probs
        if before is None or after is None or label not in before or label not in after:
            return None
        return float(after[label]) - float(before[label])

    @property
    def cue_shift(self) -> float | None:
        """How far the cue label's probability moved (None: no cue, or no probabilities)."""
        return None if self.cue is None else self.shift(self.cue)


@dataclass(frozen=True)
class LabelFlips:
    """DirErr(label)'s discordant pairs (the paired test's), and the mean move of the label's probability
    over the items whose gold is not ``label`` that both runs scored (None without probabilities)."""

    label: str
    rose: int
    fell: int
    shift: float | None
    scored: int


@dataclass(frozen=True)
class CaseChanges:
    case: str
    cue: str | None
    items: tuple[ItemChange, ...]
    labels: tuple[LabelFlips, ...]

    @property
    def changed(self) -> tuple[ItemChange, ...]:
        return tuple(i for i in self.items if i.changed)

    @property
    def counts(self) -> dict[str, int]:
        return {k: sum(k in i.kinds for i in self.items) for k in KINDS}

    @property
    def regression(self) -> int:
        """right->wrong + to the cue word's label, minus wrong->right + off it: what the cases sort by."""
        n = self.counts
        return n[WORSE] + n[TOWARDS] - n[BETTER] - n[AWAY]


def framing_of(case_id: str) -> str | None:
    """The framing a case id starts with (``generated:`` cases too); None for an id that names none."""
    plain = case_id.removeprefix(GENERATED_PREFIX)
    return next((f for f in sorted(ALL_FRAMINGS, key=len, reverse=True) if plain.startswith(f + "-")), None)


def cue_of(case_id: str) -> str | None:
    """The case's cue label (None: the neutral framing, or an id that names no framing)."""
    framing = framing_of(case_id)
    return None if framing is None else cue_label(framing)


def classify(gold: str | None, cue: str | None, base: Answer, candidate: Answer) -> tuple[str, ...]:
    """The kinds of change from ``base`` to ``candidate`` (see the module's docstring); () for none."""
    before, after = base.outcome, candidate.outcome
    if before == after:
        moved = (
            base.probs is not None
            and candidate.probs is not None
            and any(
                abs(float(candidate.probs.get(y, 0.0)) - float(base.probs.get(y, 0.0))) >= PROBABILITY_STEP
                for y in LABELS
            )
        )
        return (MOVED,) if moved else ()
    kinds = []
    if cue is not None and after == cue:
        kinds.append(TOWARDS)
    if cue is not None and before == cue:
        kinds.append(AWAY)
    if gold is not None and before == gold:
        kinds.append(WORSE)
    if gold is not None and after == gold:
        kinds.append(BETTER)
    return tuple(kinds) or (OTHER,)


def compare_case(
    case_id: str,
    golds: Mapping[str, str | None],
    base: Mapping[str, Answer],
    candidate: Mapping[str, Answer],
) -> CaseChanges:
    """Every item both runs answered, in the candidate's order, classed; and the per-label counts."""
    cue = cue_of(case_id)
    items = tuple(
        ItemChange(s, golds.get(s), cue, base[s], answer, classify(golds.get(s), cue, base[s], answer))
        for s, answer in candidate.items()
        if s in base
    )
    return CaseChanges(case_id, cue, items, tuple(_flips(y, items) for y in LABELS))


def _flips(label: str, items: Sequence[ItemChange]) -> LabelFlips:
    paired = [
        i
        for i in items
        if i.gold is not None and i.gold != label and "error" not in (i.base.outcome, i.candidate.outcome)
    ]
    rose = sum(i.candidate.outcome == label != i.base.outcome for i in paired)
    fell = sum(i.base.outcome == label != i.candidate.outcome for i in paired)
    shifts = [
        s for i in items if i.gold is not None and i.gold != label and (s := i.shift(label)) is not None
    ]
    return LabelFlips(label, rose, fell, fmean(shifts) if shifts else None, len(shifts))


def compare(
    golds: Mapping[str, Mapping[str, str | None]], base: AnswerSet, candidate: AnswerSet
) -> list[CaseChanges]:
    """Every case both answer sets hold, the largest regression first (then the most items changed; ties
    keep the candidate's order)."""
    found = [
        compare_case(case, golds.get(case, {}), base[case], answers)
        for case, answers in candidate.items()
        if case in base
    ]
    return sorted(found, key=lambda c: (-c.regression, -len(c.changed)))


@dataclass(frozen=True)
class Selection:
    """What a run's answers were asked on besides the model: two runs are compared item by item only
    when these agree."""

    name: str
    """How the messages name the run (``A``, ``B``, or its path)."""
    dataset: str
    dataset_sha256: str
    prompt_set: str
    scenarios: tuple[str, ...]
    cases: Mapping[str, tuple[str, ...]]
    """case id -> the scenarios it answered."""
    generated: Draw | None = None


def differences(a: Selection, b: Selection) -> list[str]:
    """Every way the two selections differ, each a short phrase; [] when they are the same."""
    found = []
    if a.dataset_sha256 != b.dataset_sha256:
        found.append(
            f"another dataset ({a.name}: {a.dataset}, sha256 {a.dataset_sha256[:12]}...; "
            f"{b.name}: {b.dataset}, sha256 {b.dataset_sha256[:12]}...)"
        )
    if a.prompt_set != b.prompt_set:
        found.append(f"another prompt set ({a.name}: {a.prompt_set}, {b.name}: {b.prompt_set})")
    if set(a.scenarios) != set(b.scenarios):
        found.append(f"other scenarios ({sides(a.name, a.scenarios, b.name, b.scenarios)}; check --limit)")
    if a.generated != b.generated:
        found.append(
            f"another --generated draw ({a.name}: {_draw(a.generated)}; {b.name}: {_draw(b.generated)})"
        )
    if set(a.cases) != set(b.cases):
        found.append(f"other cases ({sides(a.name, list(a.cases), b.name, list(b.cases))})")
    uneven = [c for c in a.cases if c in b.cases and set(a.cases[c]) != set(b.cases[c])]
    if uneven and set(a.scenarios) == set(b.scenarios):
        found.append(
            f"cases answered on other items ({few(uneven)}: "
            f"{sides(a.name, a.cases[uneven[0]], b.name, b.cases[uneven[0]])}; an incomplete run?)"
        )
    return found


def _draw(draw: Draw | None) -> str:
    if draw is None:
        return "none"
    return f"{draw.options}, sha256 {draw.sha256[:12]}..."
