"""The fixtures the suite's tests take (plugin/__init__.py names them, so that pytest finds them): each case's
result, and what test_invariance and test_metamorphic ask with. The suite never holds the Run itself."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from ..config.invariance_ceilings import Ceilings
from ..data.generated_draw import GENERATED_PREFIX
from ..records import items as records
from ..run.orchestrator import Run
from ..settings import Settings
from ..types import Condition, Prompt, Response, Scenario
from ..verdict.result import CaseResult
from . import own_checks, progress, properties
from .state import GENERATED_PROPERTY, PROPERTY, REVEAL_PROPERTY, STATE

AskPair = Callable[[Sequence[Condition], Scenario], tuple[list[Prompt], list[Response]]]
"""One scenario asked under each of some conditions: their prompts and the model's answers."""


@pytest.fixture(scope="session")
def mathcomp_run(request: pytest.FixtureRequest) -> Iterator[Run]:
    """The run shared by every case in this process (one per xdist worker)."""
    state = request.config.stash[STATE]
    yield state.run
    state.run.close()


@pytest.fixture(scope="session")
def mathcomp_settings(mathcomp_run: Run) -> Settings:
    """The run's settings."""
    return mathcomp_run.settings


@pytest.fixture
def framing_result(condition: Condition, mathcomp_run: Run, request: pytest.FixtureRequest) -> CaseResult:
    """Ask the model every scenario under ``condition`` and score the answers."""
    request.config.stash[STATE].ask_next()
    total = len(mathcomp_run.scenarios) * len(mathcomp_run.decodings(condition))  # every sample is asked
    with progress.case_bar(request.config, condition.id, total) as on_response:
        result = mathcomp_run.run_case(condition, on_response)
    result = own_checks.apply(request.config, mathcomp_run, result)
    summary = records.case_summary(result)
    properties.record(request.node, PROPERTY, summary)
    properties.record_power(request.node, summary)
    _warn_no_baseline(result, condition.id)
    return result


@pytest.fixture
def generated_result(condition: Condition, mathcomp_run: Run, request: pytest.FixtureRequest) -> CaseResult:
    """Ask the model ``--generated`` fresh scenarios under ``condition`` and score the answers."""
    request.config.stash[STATE].ask_next()
    result = own_checks.apply(
        request.config, mathcomp_run, mathcomp_run.run_generated_case(condition), generated=True
    )
    case_id = GENERATED_PREFIX + condition.id
    summary = {**records.case_summary(result), "case": case_id}
    properties.record(request.node, GENERATED_PROPERTY, summary)
    properties.record_power(request.node, summary)
    _warn_no_baseline(result, case_id)
    return result


def _warn_no_baseline(result: CaseResult, case_id: str) -> None:
    if result.baseline_status == "no baseline":
        warnings.warn(f"{case_id}: no baseline (the baseline has no answers for this case)", stacklevel=2)


@pytest.fixture
def reveal_after_result(
    condition: Condition, mathcomp_run: Run, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """Reveal-After under ``condition``'s position, identity and format (protocols/reveal_after.py)."""
    result = mathcomp_run.run_reveal_after(condition)
    properties.record(request.node, REVEAL_PROPERTY, result)
    return result


@pytest.fixture
def mathcomp_case(mathcomp_run: Run) -> Callable[[Condition], CaseResult]:
    """Run a case (test_invariance): the model asked every scenario under a condition, the answers scored."""
    return mathcomp_run.run_case


@pytest.fixture
def mathcomp_invariance_ceilings(mathcomp_run: Run) -> Callable[[str], Ceilings]:
    """The [invariance] ceilings of a framing against neutral, for the run's model."""
    return lambda framing: mathcomp_run.thresholds.invariance(mathcomp_run.spec, framing)[0]


@pytest.fixture
def mathcomp_ask_pair(condition: Condition, mathcomp_run: Run) -> AskPair:
    """Ask the model one scenario under each of some conditions, with ``condition``'s decoding
    (test_metamorphic): every prompt asked at once."""
    decoding = mathcomp_run.decoding(condition)

    def ask(asked: Sequence[Condition], scenario: Scenario) -> tuple[list[Prompt], list[Response]]:
        pair = [mathcomp_run.prompts_for(c, [scenario])[0] for c in asked]
        return pair, mathcomp_run.backend.complete(pair, decoding)

    return ask
