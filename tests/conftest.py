"""Shared set-up for the project's own tests: offline switches, a tiny real model, a real local server."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile

# Before anything imports transformers, huggingface_hub or litellm: nothing may reach for the network.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
# Each process that loads this file makes its own, once: a pytest run in this process that collects tests/
# (pytester) loads it again, and must not leave this process another HF_HOME than the one it started with.
# The xdist workers keep the one of the process that started them: they and their warm parents are forked
# from one process that imported huggingface_hub with it (helpers/warm_zygote.py).
_WORKER_KEEPS = "PYTEST_XDIST_WORKER" in os.environ and "MATHCOMP_TESTS_HF_HOME_OF" in os.environ
if os.environ.get("MATHCOMP_TESTS_HF_HOME_OF") != str(os.getpid()) and not _WORKER_KEEPS:
    _HF_HOME = tempfile.mkdtemp(prefix="mathcomp-hf-home-")
    os.makedirs(os.path.join(_HF_HOME, "hub"), exist_ok=True)
    atexit.register(shutil.rmtree, _HF_HOME, ignore_errors=True)
    os.environ["HF_HOME"] = _HF_HOME
    os.environ["MATHCOMP_TESTS_HF_HOME_OF"] = str(os.getpid())
# The suites these tests run must not append to the CI job's own page (tests that check it set their own).
os.environ.pop("GITHUB_STEP_SUMMARY", None)
# Most tests start the suite in a pytest subprocess. Without bytecode on disk each one compiles and
# assertion-rewrites every module of the package again (seconds of CPU a run): keep the compiled files,
# outside the checkout, for this run's workers and subprocesses and the next run.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault(
    "PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), f"mathcomp-tests-pycache-{os.getuid()}")
)
# Each xdist worker runs its own suites: one torch thread each fills the cores; two each oversubscribe them
# and torch's waiting threads spin (measured on 2 cores: a SmolLM2 run 1.7 times as fast with one thread).
os.environ.setdefault("OMP_NUM_THREADS", "1")
# A shell that starts a command in the background (`make test &`) starts it with SIGINT ignored, and every
# process it starts inherits that; the tests that press Ctrl-C on a suite need it delivered as a terminal does.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# The checked-dataset entries the suite subprocesses make, shared between them (helpers/suite_runner.py).
if "MATHCOMP_TESTS_SHARED" not in os.environ:  # made once, by the process that starts the workers
    os.environ["MATHCOMP_TESTS_SHARED"] = tempfile.mkdtemp(prefix="mathcomp-tests-shared-")
    atexit.register(shutil.rmtree, os.environ["MATHCOMP_TESTS_SHARED"], ignore_errors=True)

from collections.abc import Generator, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from helpers import shared_runs, warm_runs  # noqa: E402
from helpers.servers import transformers_serve  # noqa: E402
from helpers.shared_build import built_once  # noqa: E402
from helpers.shared_runs import DemoAgainstReference, Nights, TwoFormats  # noqa: E402
from helpers.suite_runner import REPO, SuiteRun  # noqa: E402
from helpers.tiers import mark_and_order  # noqa: E402

pytest_plugins = ["pytester", "helpers.cpu_durations"]


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the process that starts the workers starts the one warm process their warm parents are
    forked from (helpers/warm_zygote.py), before it starts them."""
    if not hasattr(config, "workerinput") and (getattr(config.option, "numprocesses", None) or 0) > 0:
        warm_runs.start_zygote()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slow tiers marked (`make check` leaves them out) and the model tier first (helpers/tiers.py)."""
    mark_and_order(items)


@pytest.hookimpl(wrapper=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """`-n auto` (make test) starts one worker more than the machine has cores, unless
    PYTEST_XDIST_AUTO_NUM_WORKERS says: these tests spend much of their time waiting on servers, on suites
    they started and on signals. Measured on 2 idle cores, the whole `make test`: 17:52 with 3 workers and
    19:45 with 4 (every core busy, and each worker's own session fixtures to build)."""
    cores: int = yield
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return cores
    return cores + 1


@pytest.fixture(scope="session")
def always_more_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real Llama with its own BPE tokenizer, trained to answer "more" to every MathComp prompt.

    Its DirErr is known exactly (DirErr(more) = 1, the others 0), which makes it a precise probe of the
    whole path: chat template, batching, decoding, parsing and scoring. Trained once for all the workers.
    """

    def build(folder: Path) -> Path:
        from mathcomp_tests import prompts
        from mathcomp_tests.data import scenarios
        from mathcomp_tests.types import FRAMINGS, Condition
        from training import tiny_model

        rows = scenarios.load(REPO / "fixtures" / "scenarios.csv")[:40]
        prompt_set = prompts.load_prompt_set("hf")
        names = prompts.std_names(prompt_set)
        texts = [
            prompts.build(s, Condition(f, p), prompt_set, names).text
            for s in rows
            for f in FRAMINGS
            for p in ("begin", "end")
        ]
        tokenizer = tiny_model.train_tokenizer(texts, vocab_size=600)
        model = tiny_model.build_model(tokenizer, seed=0)
        tiny_model.fit(model, tokenizer, [(t, "more") for t in texts], steps=40, batch_size=12)
        return tiny_model.save(model, tokenizer, folder)

    return built_once("always-more", build, tmp_path_factory.mktemp("always-more"))


@pytest.fixture(scope="session")
def untrained_model(always_more_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Random weights with the same tokenizer: varied, prompt-dependent output for decoding checks."""
    from transformers import AutoTokenizer

    from training import tiny_model

    tokenizer = AutoTokenizer.from_pretrained(always_more_model)
    model = tiny_model.build_model(tokenizer, seed=1, tie=False)
    return tiny_model.save(model, tokenizer, tmp_path_factory.mktemp("untrained"))


@pytest.fixture(scope="session")
def openai_server(always_more_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`transformers serve` on 127.0.0.1 with the tiny model, for the whole test session; the tests that use
    it share the xdist group ``openai-server``, so that one worker starts it."""
    with transformers_serve(always_more_model, tmp_path_factory.mktemp("server") / "serve.log") as url:
        yield url


# Run folders several modules only read, each made once for the whole session (helpers/shared_runs.py). A test
# that changes one copies it into its tmp_path first: other workers read the same files.


@pytest.fixture(scope="session")
def symbolic_nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    """The symbolic reference on 4 scenarios, two cases: a baseline's run, then a run compared with it."""
    return shared_runs.symbolic_nights(tmp_path_factory.mktemp("symbolic-nights"))


@pytest.fixture(scope="session")
def demo_against_reference(tmp_path_factory: pytest.TempPathFactory) -> DemoAgainstReference:
    """The symbolic reference (--prompt-set=hf, --baseline-model=symbolic), then the demo model under
    --scoring=logprob compared with its run folder: 12 scenarios, two cases."""
    return shared_runs.demo_against_reference(tmp_path_factory.mktemp("demo-against-reference"))


@pytest.fixture(scope="session")
def two_formats(tmp_path_factory: pytest.TempPathFactory) -> TwoFormats:
    """The symbolic reference on 12 scenarios, four cases, under one-word and under json, in one reports
    folder."""
    return shared_runs.two_formats(tmp_path_factory.mktemp("two-formats"))


@pytest.fixture(scope="session")
def smollm2_label_logprobs(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    """SmolLM2 under hf scoring its labels on 24 prompts (helpers/shared_runs.SMOLLM2_SCORED), asked once
    for test_smollm2.py and test_smollm2_vllm.py; a test that needs it first checks the model is prepared."""
    return shared_runs.smollm2_label_logprobs(tmp_path_factory.mktemp("smollm2-label-logprobs"))
