"""The pytest plugin: options, one parametrised case per condition, and the run's files and report.

Cheap to import: torch, transformers and litellm load only when a backend is created.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from . import results
from .backends.options import BackendOptions
from .cases import CaseResult
from .models import UnknownModelError
from .prompts import PromptConfigError
from .run import DEFAULT_MODEL, Run, SelectionError, Settings, conditions, known_identities, select
from .scenarios import DatasetError
from .thresholds import ThresholdsError
from .types import FORMATS, FRAMINGS, POSITIONS, Condition

SUITE_DIR = Path(__file__).parent / "suite"
PROPERTY = "mathcomp"
_STATE = pytest.StashKey["State"]()


class State:
    """Per-process state, registered as a plugin: the run, and the case summaries reported so far."""

    def __init__(self, run: Run):
        self.run = run
        self.cases: list[dict[str, Any]] = []
        self.summary: dict[str, Any] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        summary = _case_summary(report)
        if summary is not None and report.when == "call":
            self.cases.append(summary)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mathcomp", "MathComp framing-bias suite")
    group.addoption(
        "--model",
        default=os.environ.get("MATHCOMP_MODEL", DEFAULT_MODEL),
        help="alias (qwen2.5-3b, gpt-4o-mini, ...), symbolic, hf:<hub id or dir>, or a litellm "
        "model string such as openai/<name> (default: %(default)s)",
    )
    group.addoption(
        "--api-base",
        default=None,
        help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1",
    )
    group.addoption(
        "--prompt-set", default=None, help="hf, openai, claude or paper (default: the model's own, else hf)"
    )
    group.addoption(
        "--framings", default=None, help=f"comma-separated, or all (default: all): {', '.join(FRAMINGS)}"
    )
    group.addoption("--positions", default=None, help="comma-separated: begin, end (default: both)")
    group.addoption("--identities", default=None, help="comma-separated identity ids, or all (default: std)")
    group.addoption(
        "--formats", default=None, help=f"comma-separated, or all (default: one-word): {', '.join(FORMATS)}"
    )
    group.addoption("--limit", type=int, default=None, help="use only the first N scenarios")
    group.addoption(
        "--dataset",
        default=os.environ.get("MATHCOMP_DATASET"),
        help="a CSV in the MathComp schema, or mathcomp-original (the published benchmark, downloaded once "
        "into --cache-dir); default: fixtures/scenarios.csv",
    )
    group.addoption(
        "--dataset-policy",
        default=None,
        choices=("strict", "skip-invalid", "keep"),
        help="rows that fail verification: strict stops the run, skip-invalid leaves them out, keep scores them "
        "with the published label (default: keep for mathcomp-original, strict otherwise)",
    )
    group.addoption(
        "--thresholds", default=None, help="ceilings file (default: thresholds.toml at the rootdir)"
    )
    group.addoption("--device", default="auto", help="hf backend: auto, cpu, cuda, cuda:N, mps")
    group.addoption(
        "--batch-size", type=int, default=None, help="hf backend: prompts per batch (default: automatic)"
    )
    group.addoption(
        "--scoring",
        default="generate",
        choices=("generate", "logprob"),
        help="hf backend: greedy generation, or label log-probabilities (one-word and json formats)",
    )
    group.addoption(
        "--num-retries", type=int, default=4, help="api backend: retries on 429, 5xx and timeouts"
    )
    group.addoption("--request-timeout", type=float, default=120.0, help="api backend: seconds per request")
    group.addoption(
        "--model-config", default=None, help="api backend: a litellm Router config (YAML or JSON)"
    )
    group.addoption(
        "--max-error-rate",
        type=float,
        default=None,
        help="fail a case when more than this share of its requests failed (overrides thresholds.toml)",
    )
    group.addoption(
        "--max-concurrency", type=int, default=16, help="api backend: requests in flight per process"
    )
    group.addoption(
        "--max-new-tokens", type=int, default=None, help="override the per-format generation budget"
    )
    group.addoption(
        "--cache-dir",
        default=os.environ.get("MATHCOMP_CACHE_DIR"),
        help="where the sqlite response cache lives (default: .mathcomp-cache at the rootdir)",
    )
    group.addoption("--no-cache", action="store_true", help="ask the model for every prompt, store nothing")
    group.addoption(
        "--reports-dir", default=None, help="where run folders go (default: reports/ at the rootdir)"
    )


def _settings(config: pytest.Config) -> Settings:
    opt, root = config.getoption, Path(config.rootpath)
    dataset = opt("dataset")
    cache_dir = Path(opt("cache_dir") or root / ".mathcomp-cache")
    kwargs: dict[str, Any] = {
        "model": opt("model"),
        "prompt_set": opt("prompt_set"),
        "framings": select(opt("framings"), FRAMINGS, "framing", FRAMINGS),
        "positions": select(opt("positions"), POSITIONS, "position", POSITIONS),
        "identities": select(opt("identities"), known_identities(), "identity", ("std",)),
        "formats": select(opt("formats"), FORMATS, "format", ("one-word",)),
        "limit": opt("limit"),
        "dataset": dataset,
        "dataset_policy": opt("dataset_policy"),
        "dataset_cache": cache_dir,
        "thresholds": Path(opt("thresholds") or root / "thresholds.toml"),
        "backend": BackendOptions(
            api_base=opt("api_base"),
            model_config=Path(opt("model_config")) if opt("model_config") else None,
            max_concurrency=opt("max_concurrency"),
            num_retries=opt("num_retries"),
            request_timeout=opt("request_timeout"),
            device=opt("device"),
            batch_size=opt("batch_size"),
            scoring=opt("scoring"),
        ),
        "max_error_rate": opt("max_error_rate"),
        "max_new_tokens": opt("max_new_tokens"),
        "cache_path": None if opt("no_cache") else cache_dir / "responses.sqlite",
        "reports_dir": Path(opt("reports_dir") or root / "reports"),
    }
    if kwargs["limit"] is not None and kwargs["limit"] < 1:
        raise SelectionError(f"--limit must be at least 1, got {kwargs['limit']}")
    return Settings(**kwargs)


def _selects_suite(config: pytest.Config) -> bool:
    """True when this session collects from the suite (not, say, the project's own tests)."""
    for arg in config.args:
        if arg.split("::")[0] in ("mathcomp_tests", "mathcomp_tests.suite"):
            return True
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path == SUITE_DIR or SUITE_DIR in path.parents or path in SUITE_DIR.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not _selects_suite(config):
        return
    workerinput = getattr(config, "workerinput", None)
    try:
        settings = _settings(config)
        run_id = workerinput["mathcomp_run_id"] if workerinput else results.new_run_id(settings.model)
        worker = workerinput["workerid"] if workerinput else "main"
        run = Run(settings, run_id, worker)
    except (DatasetError, ThresholdsError, PromptConfigError, UnknownModelError, SelectionError) as exc:
        raise pytest.UsageError(str(exc)) from exc
    state = State(run)
    config.stash[_STATE] = state
    config.pluginmanager.register(state, "mathcomp-state")
    if workerinput is None and not config.option.collectonly:
        run.run_dir.mkdir(parents=True, exist_ok=True)
        if not config.getoption("htmlpath", None):
            config.option.htmlpath = str(run.run_dir / results.REPORT)
            config.option.self_contained_html = True
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(run_id), "mathcomp-xdist")


class _XdistHooks:
    """Hooks that exist only under pytest-xdist: hand the controller's run id to every worker."""

    def __init__(self, run_id: str):
        self.run_id = run_id

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mathcomp_run_id"] = self.run_id


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return None
    run = state.run
    return [
        f"mathcomp: model {run.spec.given} ({run.spec.resolved}), prompt set {run.prompt_set.name}",
        *run.dataset.header(),
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "condition" not in metafunc.fixturenames:
        return
    state = metafunc.config.stash.get(_STATE, None)
    if state is None:
        raise pytest.UsageError(
            "the MathComp suite was collected without its settings; run it from the rootdir"
        )
    selected = conditions(state.run.settings)
    metafunc.parametrize("condition", selected, ids=[c.id for c in selected])


@pytest.fixture(scope="session")
def mathcomp_run(request: pytest.FixtureRequest) -> Any:
    """The run shared by every case in this process (one per xdist worker)."""
    state: State = request.config.stash[_STATE]
    yield state.run
    state.run.close()


@pytest.fixture
def framing_result(condition: Condition, mathcomp_run: Run, record_property: Any) -> CaseResult:
    """Ask the model every scenario under ``condition`` and score the answers."""
    result = mathcomp_run.run_case(condition)
    record_property(PROPERTY, result.summary())
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report = outcome.get_result()
    summary = _case_summary(report)
    if summary is None or report.when != "call":
        return
    from pytest_html import extras

    from .report import case_extra_html

    report.extras = [*getattr(report, "extras", []), extras.html(case_extra_html(summary))]


def _case_summary(report: pytest.TestReport) -> dict[str, Any] | None:
    for name, value in getattr(report, "user_properties", []):
        if name == PROPERTY:
            return dict(value)
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None or hasattr(config, "workerinput") or config.option.collectonly:
        return
    run = state.run
    run.close()
    order = {c.id: i for i, c in enumerate(conditions(run.settings))}
    state.cases.sort(key=lambda c: order.get(c["case"], len(order)))
    results.merge_parts(run.run_dir)
    state.summary = _run_summary(run, state.cases)
    results.write_summary(run.run_dir, state.summary)
    results.point_latest(run.settings.reports_dir, run.run_dir)


def _run_summary(run: Run, cases: list[dict[str, Any]]) -> dict[str, Any]:
    s = run.settings
    return {
        "run_id": run.run_id,
        "model": s.model,
        "resolved": run.spec.resolved,
        "revision": next((c["revision"] for c in cases), None),
        "prompt_set": run.prompt_set.name,
        "dataset": {
            "name": run.dataset.name,
            "path": str(run.dataset.path),
            "policy": run.dataset.policy,
            "excluded": [str(f) for f in run.dataset.excluded],
            "kept_invalid": [str(f) for f in run.dataset.kept_invalid],
            "audit_notes": len(run.dataset.notes),
        },
        "scenarios": len(run.scenarios),
        "thresholds": str(s.thresholds),
        "selection": {
            "framings": s.framings,
            "positions": s.positions,
            "identities": s.identities,
            "formats": s.formats,
        },
        "cases_run": len(cases),
        "cases_failed": sum(not c["passed"] for c in cases),
        "prompts_sent": sum(c["sent"] for c in cases),
        "usage": {
            "input_tokens": sum(c["usage"]["input_tokens"] for c in cases),
            "output_tokens": sum(c["usage"]["output_tokens"] for c in cases),
            "cost_usd": sum(c["usage"]["cost_usd"] or 0 for c in cases)
            if any(c["usage"]["cost_usd"] is not None for c in cases)
            else None,
        },
        "cases": cases,
    }


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or hasattr(config, "workerinput") or not state.cases:
        return
    tr = terminalreporter
    tr.write_sep("=", f"MathComp directional error: {state.run.settings.model}")
    tr.write_line(f"{'case':<40} {'less':>7} {'more':>7} {'equal':>7} {'acc':>7} {'invalid':>8}")
    for case in state.cases:
        d, sc = case["scores"]["dir_err"], case["scores"]
        cells = " ".join(
            f"{'n/a' if d[y] is None else f'{100 * d[y]:.1f}%':>7}" for y in ("less", "more", "equal")
        )
        flag = "" if case["passed"] else "  FAIL"
        tr.write_line(
            f"{case['case']:<40} {cells} {100 * sc['accuracy']:>6.1f}% {100 * sc['invalid_rate']:>7.1f}%{flag}"
        )
    tr.write_line(f"run folder: {state.run.run_dir}")


@pytest.hookimpl(optionalhook=True)
def pytest_html_report_title(report: Any) -> None:
    report.title = "MathComp framing-bias report"


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(
    prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    from .report import heatmaps_html, run_header_html, summary_table_html

    if state.summary is not None:
        prefix.append(run_header_html(state.summary))
    prefix.append(summary_table_html(state.run.settings.model, state.cases))
    postfix.append(heatmaps_html(state.cases))
