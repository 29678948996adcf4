"""One scenario, two wordings: the answer must not change between the neutral framing and a cue, nor
between the standard names and an identity (``--metamorphic``).

One thing changes per pair, so that a flip names its cause: a cue case is compared with the neutral
framing under the same identity (on the same side), option order and format; a neutral identity case with
the standard names under the same option order and format. Each answer is read against its own prompt.

Hypothesis draws scenarios from the generator's strategy; a flip shrinks to the smallest scenario that
still flips (fewest steps, smallest numbers, plain amounts), shown with both prompts and both answers.
Failing examples are kept in Hypothesis' example database under --cache-dir and tried first next run.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from mathcomp_tests import formats
from mathcomp_tests.data.generate import scenarios
from mathcomp_tests.plugin.fixtures import AskPair
from mathcomp_tests.settings import Settings
from mathcomp_tests.types import NEUTRAL, Condition, Scenario


def partner(condition: Condition) -> Condition:
    """The wording ``condition`` is compared with: the same case without its cue, or, for a neutral
    case, without its identity."""
    if condition.framing != NEUTRAL:
        return replace(condition, framing=NEUTRAL)
    return replace(condition, identity="std", identity_on="b")


def test_metamorphic(condition: Condition, mathcomp_settings: Settings, mathcomp_ask_pair: AskPair) -> None:
    base = partner(condition)
    database = DirectoryBasedExampleDatabase(str(mathcomp_settings.dataset_cache / "hypothesis"))

    @settings(
        max_examples=mathcomp_settings.generated,
        deadline=None,
        database=database,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(scenarios())
    def same_answer(scenario: Scenario) -> None:
        pair, responses = mathcomp_ask_pair((base, condition), scenario)
        read = [formats.read(p, r) for r, p in zip(responses, pair, strict=True)]
        if read[0].label != read[1].label:
            shown = "\n".join(
                f"--- {p.condition.id}: answered {x.label or x.status} ({r.text!r})\n{p.text}"
                for p, r, x in zip(pair, responses, read, strict=True)
            )
            raise AssertionError(
                f"the answer changed from {read[0].label or read[0].status} ({base.id}) to "
                f"{read[1].label or read[1].status} ({condition.id}); gold {scenario.label}, "
                f"A = {scenario.expr_a}, B = {scenario.expr_b}\n{shown}"
            )

    same_answer()
