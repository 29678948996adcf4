"""Run folders that several test modules only read, made once for the whole test session (tests/conftest.py
hands them out as session fixtures).

The first xdist worker to ask runs the suite, in place under ``$MATHCOMP_TESTS_SHARED`` (made by the process
that starts the workers), so that the paths a run writes into its summary.json and report.html stay true; a
worker that comes later waits on the lock and takes the folders as they are. A build that failed leaves
nothing behind, so the next worker tries again. Without the shared folder (a run started otherwise) the runs
are made under ``fallback``.

The folders are read only: a test that changes a run folder (damages a line, writes a page into it) copies
it first (``shutil.copytree`` into its ``tmp_path``), since other modules on other workers read the same
files.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from helpers.shared_build import built_once
from helpers.suite_runner import SuiteRun, run_suite
from mathcomp_tests.records import results

NIGHTS = ("--model=symbolic", "--limit=4", "--framings=neutral,direct-more", "--positions=begin")
"""The symbolic nights' selection: two cases."""
COMPARED = ("--limit=12", "--framings=neutral,direct-more", "--positions=begin")
"""The demo model against the reference: the selection of both runs, two cases of 12 items."""
RUNS = "runs.json"
"""Beside a shared folder's runs: each one's exit status, output and run folder."""
FORMATS = ("--model=symbolic", "--limit=12", "--framings=neutral,direct-less")
"""The two formats' runs: four cases each."""
SCORED_LABELS = ("--limit=12", "--positions=end", "--framings=neutral", "--formats=one-word,json", "--scoring=logprob")
"""The selection and scoring of SmolLM2's label-probability runs: 24 prompts, two cases."""
SMOLLM2_SCORED = ("--model=smollm2-135m", *SCORED_LABELS)
"""SmolLM2's label probabilities under hf."""


@dataclass(frozen=True)
class Nights:
    """Two real runs of the symbolic reference: a baseline's, then a run compared with it."""

    baseline: Path
    """The baseline file the first run wrote (--update-baseline)."""
    base: SuiteRun
    compared: SuiteRun
    """Compared with ``baseline`` (--baseline): every answer as the base's, so it passes."""


@dataclass(frozen=True)
class DemoAgainstReference:
    reference: SuiteRun
    """The symbolic model under --prompt-set=hf: every answer right (compared with itself asked in the same
    run, --baseline-model)."""
    demo: SuiteRun
    """The demo model under --scoring=logprob, compared with the reference's run folder (--baseline): it
    follows the cue, DirErr(more) rose (exit status 1)."""


@dataclass(frozen=True)
class TwoFormats:
    """Two runs of the symbolic reference in one reports folder (``one_word.run_dir.parent``)."""

    one_word: SuiteRun
    json: SuiteRun
    """The same selection under --formats=json."""


def made_once(
    name: str, make: Callable[[Path], dict[str, SuiteRun]], fallback: Path
) -> tuple[Path, dict[str, SuiteRun]]:
    """``make(folder)`` once per test session, in place (helpers/shared_build.built_once): the folder, and its
    runs by name, kept beside them in runs.json for the workers that come later."""

    def build(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        said = {
            k: {"returncode": r.returncode, "output": r.output, "run_dir": str(r.run_dir)}
            for k, r in make(folder).items()
        }
        (folder / RUNS).write_text(json.dumps(said), encoding="utf-8")
        return folder

    folder = built_once(name, build, fallback, in_place=True)
    kept = json.loads((folder / RUNS).read_text(encoding="utf-8"))
    return folder, {k: SuiteRun(v["returncode"], v["output"], Path(v["run_dir"])) for k, v in kept.items()}


def symbolic_nights(fallback: Path) -> Nights:
    def make(folder: Path) -> dict[str, SuiteRun]:
        baseline = folder / "baseline.txt"
        base = run_suite(folder / "a", *NIGHTS, f"--update-baseline={baseline}")
        assert base.returncode == 0 and baseline.is_file(), base.output
        past_the_second_of(base)
        compared = run_suite(folder / "b", *NIGHTS, f"--baseline={baseline}")
        assert compared.returncode == 0, compared.output
        assert started(compared) > started(base), "the compared night is the newer by its run id"
        return {"base": base, "compared": compared}

    folder, runs = made_once("symbolic-nights", make, fallback)
    return Nights(folder / "baseline.txt", runs["base"], runs["compared"])


def started(run: SuiteRun) -> dt.datetime:
    """When ``run`` started, by its run id (to the second, as the site and the history order nights)."""
    when = results.run_started(str(run.summary["run_id"]))
    assert when is not None, run.summary["run_id"]
    return when


def past_the_second_of(run: SuiteRun) -> None:
    """Return once a run started now would have a later run id time than ``run``: two symbolic runs can
    start within one second, and nights of one second are ordered by their ids' random part."""
    second = started(run)
    while dt.datetime.now().replace(microsecond=0) <= second:
        time.sleep(0.05)


def demo_against_reference(fallback: Path) -> DemoAgainstReference:
    def make(folder: Path) -> dict[str, SuiteRun]:
        reference = run_suite(
            folder / "a", "--model=symbolic", "--prompt-set=hf", "--baseline-model=symbolic", *COMPARED
        )
        assert reference.returncode == 0, reference.output
        demo = run_suite(folder / "b", *COMPARED, "--scoring=logprob", f"--baseline={reference.run_dir}")
        assert demo.returncode == 1, demo.output  # the demo model follows the cue: DirErr(more) rose
        return {"reference": reference, "demo": demo}

    _, runs = made_once("demo-against-reference", make, fallback)
    return DemoAgainstReference(runs["reference"], runs["demo"])


def two_formats(fallback: Path) -> TwoFormats:
    def make(folder: Path) -> dict[str, SuiteRun]:
        one_word = run_suite(folder, *FORMATS)
        json_format = run_suite(folder, *FORMATS, "--formats=json")
        assert one_word.returncode == json_format.returncode == 0, one_word.output + json_format.output
        return {"one_word": one_word, "json": json_format}

    _, runs = made_once("two-formats", make, fallback)
    return TwoFormats(runs["one_word"], runs["json"])


def smollm2_label_logprobs(fallback: Path) -> SuiteRun:
    """SmolLM2 under hf scoring its labels (SMOLLM2_SCORED) against ceilings no answer breaches and without
    the repository's conftest.py: the records test_smollm2.py reads and test_smollm2_vllm.py compares vLLM's
    with, asked once (about 20 s of one core)."""

    def make(folder: Path) -> dict[str, SuiteRun]:
        from helpers.vllm_serving import loose_ceilings  # here: it imports the vLLM engine module (0.2 s)

        return {"hf": run_suite(folder / "hf", *SMOLLM2_SCORED, *loose_ceilings(folder))}

    _, runs = made_once("smollm2-label-logprobs", make, fallback)
    return runs["hf"]
