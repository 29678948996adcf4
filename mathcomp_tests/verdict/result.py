"""A case's outcome as plain data: its items, scores, ceilings and baseline comparison, and what failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import owncheck
from ..config.thresholds import Ceilings
from ..scoring import metrics
from ..scoring.paired import Comparison
from ..types import Condition, Item
from . import checks
from . import standing as standing_rules


@dataclass(frozen=True)
class CaseResult:
    condition: Condition
    model: str
    revision: str
    items: tuple[Item, ...]
    scores: metrics.Scores
    ceilings: Ceilings
    sent: int
    """Prompts of this case sent to the model (the rest came from the cache)."""
    sample_scores: tuple[metrics.Scores, ...] = ()
    """Scores of each sample when the case was sampled more than once (``scores`` pools them all)."""
    judge_sent: int = 0
    """Declined answers of this case sent to the judge model (the rest of its verdicts came from the cache)."""
    comparison: Comparison | None = None
    """This case against the baseline's answers on the same items, when a baseline was given."""
    baseline_status: str = "none"
    """none (no baseline asked for), compared, or no baseline (the baseline lacks this case)."""
    extra_failures: tuple[str, ...] = ()
    """Failures that checks of the user's own (the pytest_mathcomp_check hook) reported for this case."""
    chat_template: str | None = None
    """How the model's backend laid the prompts out: `auto` (the model's chat template) or `none` (plain
    text); None where that is not the suite's to choose (an API server applies its own, symbolic reads none)."""
    base_scores: metrics.Scores | None = None
    """The base's scores on the same items, from the baseline's answers (None: no baseline for this case)."""
    base_extra_failures: tuple[str, ...] | None = None
    """What the project's own checks found on the base's answers (None: not checked on the base)."""
    own_values: dict[str, float] = field(default_factory=dict)
    """The values the project's own checks measured (those that return ``mathcomp_tests.Check``), by name."""
    base_own_values: dict[str, float] | None = None
    """The same checks' values on the base's answers."""
    own_tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The paired test of each own check the base fails too and that can recompute its value, by name
    (scoring/own_paired.py)."""

    @property
    def ceiling_breaches(self) -> list[str]:
        return checks.breaches(self.scores, self.ceilings)

    @property
    def breaches(self) -> list[str]:
        rises = self.comparison.breaches if self.comparison else []
        return self.ceiling_breaches + rises + list(self.extra_failures)

    @property
    def passed(self) -> bool:
        return not self.breaches

    @property
    def base_breaches(self) -> list[str] | None:
        """The ceilings the base breaches on this case's items, held as this case is (None: no base)."""
        return standing_rules.base_breaches(self.base_scores, self.ceilings)

    @property
    def standing(self) -> str | None:
        """``new`` or ``known`` for a failed case compared with a baseline (verdict/standing.py); None
        when it passed or the run has no baseline."""
        if self.baseline_status == "none":
            return None
        rises = self.comparison.breaches if self.comparison else []
        return standing_rules.classify(
            self.ceiling_breaches,
            rises,
            self.extra_failures,
            self.base_breaches,
            self.base_extra_failures,
            self.own_worse,
        )

    @property
    def own_worse(self) -> list[str]:
        """The project's own checks much worse than the base's: a significant rise above max_increase where
        the check can be tested, else a value more than max_increase (its smallest) above the base's."""
        by = min(self.ceilings.max_increase.values())
        return owncheck.much_worse(self.own_values, self.base_own_values, by, self.own_tests)

    def outcomes(self) -> dict[str, str]:
        """scenario id -> less, more, equal, invalid or error."""
        return {i.prompt.scenario.id: i.prediction.label or i.prediction.status for i in self.items}

    def probabilities(self) -> dict[str, dict[str, float]] | None:
        """scenario id -> label probabilities, when every answered item has them (label scoring of a plain
        case); None otherwise."""
        found = {
            i.prompt.scenario.id: i.response.meta.get("probs")
            for i in self.items
            if i.prediction.status != "error" and not i.turns
        }
        if not found or len(found) < sum(1 for i in self.items if i.prediction.status != "error"):
            return None
        return found if all(isinstance(p, dict) for p in found.values()) else None  # type: ignore[return-value]

    def golds(self) -> dict[str, str]:
        return {i.prompt.scenario.id: i.prompt.scenario.label for i in self.items}

    def wrong_items(self, n: int) -> list[Item]:
        return [i for i in self.items if i.wrong][:n]
