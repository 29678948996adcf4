"""The pytest plugin: options, one parametrised case per condition, and the run's files and report. Cheap to
import: torch, transformers and litellm load only when a backend is created."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from .. import formats
from ..backends.base import BackendError, NoAnswer, ServerGoneError
from ..backends.batch.protocol import BatchError
from ..backends.cache.file import DamagedCacheError, not_ours
from ..backends.models import UnknownModelError
from ..baseline_file.format import BaselineError
from ..config.thresholds import ThresholdsError
from ..data.scenarios import DatasetError
from ..printable import printable
from ..prompts import PromptConfigError
from ..records import results
from ..run import folders, served
from ..run.folders import FolderError
from ..run.orchestrator import Run
from ..settings import SelectionError, Settings
from ..suite_selection import SUITE_DIR, selects_suite
from ..types import Condition
from . import (
    batch_phase,
    header,
    known_failures,
    matrix,
    options,
    origins,
    properties,
    report_copy,
    serving,
    terminal,
)
from .closing_line import ClosingLine
from .finish import finish
from .fixtures import framing_result as framing_result  # the suite's fixtures: pytest finds them here
from .fixtures import generated_result as generated_result
from .fixtures import mathcomp_ask_pair as mathcomp_ask_pair
from .fixtures import mathcomp_case as mathcomp_case
from .fixtures import mathcomp_invariance_ceilings as mathcomp_invariance_ceilings
from .fixtures import mathcomp_run as mathcomp_run
from .fixtures import mathcomp_settings as mathcomp_settings
from .fixtures import reveal_after_result as reveal_after_result
from .merged import plan_of
from .session_tracker import Tracker, write_incomplete
from .state import GENERATED_PROPERTY, STATE, State, case_summary

_TRACKER = pytest.StashKey[Tracker]()
MARKERS = {
    "cot": "a chain-of-thought case (formats cot, cot-json): long generations; -m 'not cot' is the quick gate",
    "identity": "a case whose persons carry an identity marker (not std)",
    "generated": "a case on generated scenarios (suite/test_generated.py)",
    "slow": "a case asking for long generations (over 64 new tokens) or calling a judge model",
}
SLOW_TOKENS = 64


def _selects_suite(config: pytest.Config) -> bool:
    """True when this session collects from the suite (not, say, the project's own tests)."""
    return selects_suite(config.args, config.invocation_params.dir)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _selects_suite(config):
        return
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
    properties.configure(config)  # --junitxml: one warning, not one per case
    workerinput = getattr(config, "workerinput", None)
    merged = plan_of(config)  # `mathcomp merge`: the whole run, answered from the shards' records
    run: Run
    try:
        if merged is not None:
            settings = merged.run.settings
            run = Run(settings, merged.run.run_id, answering=merged.replay)
        else:
            settings = options.settings(config)
            settings = serving.served(config, settings)  # vllm:...: the run's server, started once
            run_id = workerinput["mathcomp_run_id"] if workerinput else results.new_run_id(settings.model)
            run = Run(settings, run_id, workerinput["workerid"] if workerinput else "main")
        batch_phase.check(run)
        if not config.option.collectonly:
            folders.check(settings)
            _ = run.backend  # created and probed once, here: a model that cannot answer stops the run now
            try:
                _ = run.judge  # the judge too
            except BackendError as exc:
                judge_from = origins.origin(config, "judge_model")
                raise pytest.UsageError(
                    f"{judge_from}={printable(str(settings.judge_model))}: {exc}"
                ) from exc
            if run.comparator is not None and run.comparator.model is not None:
                try:
                    _ = run.comparator.backend  # and the baseline model
                except BackendError as exc:
                    raise pytest.UsageError(f"--baseline-model={settings.baseline_model}: {exc}") from exc
            if workerinput is None and _has_workers(config):
                run.close()  # the controller only probed; each worker opens its own
    except UnknownModelError as exc:
        raise pytest.UsageError(origins.unknown_model(config, exc)) from exc
    except (
        DatasetError,
        ThresholdsError,
        PromptConfigError,
        SelectionError,
        BaselineError,
        FolderError,
    ) as exc:
        raise pytest.UsageError(str(exc)) from exc
    except DamagedCacheError as exc:
        clear = f"mathcomp cache clear --cache-dir={shlex.quote(str(exc.path.parent))}"
        foreign = not_ours(exc.path) if exc.path.is_file() else None
        if foreign is not None:  # not ours to delete: `clear` would refuse it too
            raise pytest.UsageError(
                f"the response cache {exc.path} is {foreign}; move it away, or give --cache-dir a folder of "
                "its own"
            ) from exc
        raise pytest.UsageError(
            f"the response cache {exc}; `{clear}` removes it (its answers are lost: the next run asks the "
            "model again)"
        ) from exc
    except BackendError as exc:
        serving.stop(config)
        model_from = origins.origin(config, "model")
        raise pytest.UsageError(f"{model_from}={printable(settings.model)}: {exc}") from exc
    except BaseException:
        serving.stop(config)
        raise
    state = State(run)
    config.stash[STATE] = state
    config.pluginmanager.register(state, "mathcomp-state")
    tracker = config.stash[_TRACKER] = Tracker()
    config.pluginmanager.register(tracker, "mathcomp-session-tracker")
    tracker.install()
    if workerinput is None:
        config.pluginmanager.register(ClosingLine(state), "mathcomp-closing-line")
    if settings.backend.batch is not None:
        controller = workerinput is None and _has_workers(config)
        phase = batch_phase.WorkerBatches(run) if controller else batch_phase.BatchPhase(run)
        config.pluginmanager.register(phase, "mathcomp-batch")
    if workerinput is None and not config.option.collectonly:
        run.run_dir.mkdir(parents=True, exist_ok=True)
        report_copy.configure(config, run.run_dir)  # report.html in the run folder, with or without --html
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(run.run_id, settings), "mathcomp-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    serving.stop(config)
    tracker = config.stash.get(_TRACKER, None)
    if tracker is not None:
        tracker.uninstall()


def _has_workers(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and config.getoption("dist", "no") != "no"


class _XdistHooks:
    """Hooks that exist only under pytest-xdist: hand the controller's run id (and the model server it
    started) to every worker."""

    def __init__(self, run_id: str, settings: Settings):
        self.run_id = run_id
        self.settings = settings

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mathcomp_run_id"] = self.run_id
        serving.to_worker(node, self.settings)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(STATE, None)
    return None if state is None else header.lines(config, state.run)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "condition" not in metafunc.fixturenames:
        return
    state = metafunc.config.stash.get(STATE, None)
    if state is None:
        if SUITE_DIR not in metafunc.definition.path.parents:
            return  # someone else's test with an argument named `condition`
        raise pytest.UsageError(
            "the MathComp suite was collected without its settings; run it from the rootdir"
        )
    selected = matrix.for_test(metafunc.function.__name__, state.run.settings)
    generated = metafunc.definition.path.name == "test_generated.py"
    params = [pytest.param(c, id=c.id, marks=_marks(c, state.run, generated)) for c in selected]
    metafunc.parametrize("condition", params)


def _marks(condition: Condition, run: Run, generated: bool) -> list[pytest.MarkDecorator]:
    """The markers a case carries, so that `-m` selects parts of the matrix."""
    marks = []
    steps = formats.get(condition.format).steps
    if steps or condition.protocol == "cot":
        marks.append(pytest.mark.cot)
    if condition.identity != "std":
        marks.append(pytest.mark.identity)
    if generated:
        marks.append(pytest.mark.generated)
    judged = run.judge_spec is not None and formats.get(condition.format).judged
    if run.decoding(condition).max_new_tokens > SLOW_TOKENS or judged or condition.protocol == "cot":
        marks.append(pytest.mark.slow)
    return marks


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --metamorphic (--invariance, --reveal-after), test_metamorphic (test_invariance's cases,
    test_reveal_after) are deselected, not collected as empty parameter sets. Then, the selection final
    (after -k, -m, --deselect), the baseline learns how many cases it is compared on, and must fit the
    generated cases when test_generated runs."""
    state = config.stash.get(STATE, None)
    if state is None:
        return
    off = {name for name in matrix.SUITE_TESTS if not matrix.enabled(name, state.run.settings)}
    dropped = [i for i in items if getattr(i, "originalname", "") in off or _empty_invariance(i)]
    if dropped:
        items[:] = [i for i in items if i not in dropped]
        config.hook.pytest_deselected(items=dropped)
    comparator = state.run.comparator
    if comparator is not None:
        compared = [i for i in items if getattr(i, "originalname", "") in matrix.GATED_TESTS]
        comparator.count_tests(
            [getattr(getattr(i, "callspec", None), "params", {}).get("condition") for i in compared]
        )
        generated = any(getattr(i, "originalname", "") == "test_generated" for i in items)
        if generated and not hasattr(config, "workerinput"):  # a worker's cases raise it instead
            try:
                state.run.check_generated_baseline()
            except BaselineError as exc:
                state.abandoned = True
                raise pytest.UsageError(str(exc)) from exc


def _empty_invariance(item: pytest.Item) -> bool:
    """An invariance test with nothing to compare (no cue, or no neutral framing, selected)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return getattr(item, "originalname", "") in matrix.INVARIANCE_TESTS and "condition" not in params


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and isinstance(call.excinfo.value, (ServerGoneError, BatchError)):
        item.session.shouldstop = str(call.excinfo.value)  # the run ends here, not case after case
        report.longrepr = str(call.excinfo.value)
    elif call.excinfo is not None and isinstance(call.excinfo.value, NoAnswer):
        report.longrepr = str(call.excinfo.value)  # a merged run's prompt no shard answered: one line
    summary = case_summary(report)
    state = item.config.stash.get(STATE, None)
    fail_on = state.run.settings.fail_on if state is not None else "any"
    known_failures.known_as_xfail(fail_on, report, summary or case_summary(report, GENERATED_PROPERTY))
    if summary is None or report.when != "call":
        return
    from pytest_html import extras

    from ..report import case_extra_html

    report.extras = [*getattr(report, "extras", []), extras.html(case_extra_html(summary))]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None or hasattr(config, "workerinput") or config.option.collectonly or state.abandoned:
        return
    finish(session, state, config.stash[_TRACKER])


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or hasattr(config, "workerinput") or config.option.collectonly or state.abandoned:
        return
    write_incomplete(terminalreporter, state.summary)
    if not (state.cases or state.generated_cases):
        for note in state.notes:
            terminalreporter.write_line(note)
        return
    baseline = (state.summary or {}).get("baseline")
    cases = [*state.cases, *state.generated_cases]
    model = printable(state.run.settings.model)
    merged = plan_of(config)  # a merged run is read where it is swapped in, not where it is built
    folder = state.run.run_dir if merged is None else merged.out
    terminal.write_table(terminalreporter, model, cases, folder, baseline)
    for note in [*state.notes, *served.warning(state.summary or {})]:
        terminalreporter.write_line(note)


@pytest.hookimpl(optionalhook=True)
def pytest_html_report_title(report: Any) -> None:
    report.title = "MathComp framing-bias report"


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(
    prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    from ..report.page import PYTEST_HTML_ORDER, run_sections

    comparator = state.run.comparator  # a baseline file's per-item answers draw the baseline per category
    answers = comparator.file.cases if comparator is not None and comparator.file is not None else None
    prefix.append(PYTEST_HTML_ORDER)
    cases = [*state.cases, *state.generated_cases]  # every case is a row of the table
    prefix += run_sections(state.summary, cases, state.records, state.run.settings.model, answers)
