"""Every bad input stops the suite once, before any case, with one `ERROR:` line that says what is wrong and
what was expected (pytest's usage error, exit code 4), never a traceback; and what it reads back from disk
(the response cache, a killed run's parts) is checked, not trusted.

The table runs the suite the way a user does, from the repository root, with the symbolic model.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.fault_server import Fault, FaultServer
from helpers.suite_runner import REPO, SuiteRun, run_suite

from mathcomp_tests.backends.cache import ResponseCache, Row
from mathcomp_tests.records import items, results
from mathcomp_tests.types import Response

ONE_CASE = ("--model=symbolic", "--limit=2", "--framings=neutral", "--positions=end")
UNWRITABLE = Path("/sys/mathcomp-bad-inputs")
"""A folder that cannot be made, even by root (a mode-555 folder does not stop root from writing)."""
READ_ONLY = Path("/sys")
"""A folder that exists and refuses new files, even from root."""
PERMISSIVE = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n"
ROUTER = (
    "model_list:\n"
    "  - model_name: fast\n"
    "    litellm_params: {{model: openai/x, api_base: '{url}'}}\n"
    "  - model_name: slow\n"
    "    litellm_params: {{model: openai/y, api_base: '{url}'}}\n"
)

Setup = Callable[[Path], tuple[tuple[str, ...], str]]
"""Makes the files a bad input needs under a temporary folder: (arguments, the expected error text)."""


def binary(path: Path) -> Path:
    """A file of bytes that are not UTF-8 text (a compiled file, an image given by mistake)."""
    path.write_bytes(bytes(range(128, 256)) * 4)
    return path


def binary_thresholds(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "thresholds.toml")
    return (f"--thresholds={path}",), f"{path}: not UTF-8 text; expected a thresholds file in TOML"


def thresholds_directory(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--thresholds={tmp}",), f"{tmp}: a folder, not a file; expected a thresholds file in TOML"


def binary_router(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "router.yaml")
    expected = f"--model-config {path} is not UTF-8 text; expected a litellm Router config (YAML or JSON)"
    return ("--model=openai/m", f"--model-config={path}"), expected


def unknown_group(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "router.yaml"
    path.write_text(ROUTER.format(url="http://127.0.0.1:9/v1"))
    return ("--model=medium", f"--model-config={path}"), f"--model-config {path} has the groups fast, slow"


def binary_identities(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = binary(tmp / "identities.toml")
    return (f"--identities-file={path}",), f"{path}: not UTF-8 text; expected a TOML file"


def cache_dir_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "a-file"
    path.write_text("")
    return (f"--cache-dir={path}",), f"--cache-dir={path}: a file, not a folder"


def cache_dir_unwritable(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--cache-dir={UNWRITABLE}",), f"--cache-dir={UNWRITABLE}: cannot make this folder ("


def cache_dir_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--cache-dir={READ_ONLY}",), f"--cache-dir={READ_ONLY}: cannot write in this folder ("


def reports_dir_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = tmp / "a-file"
    path.write_text("")
    return (f"--reports-dir={path}",), f"--reports-dir={path}: a file, not a folder"


def reports_dir_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    return (f"--reports-dir={READ_ONLY}",), f"--reports-dir={READ_ONLY}: cannot write in this folder ("


def damaged_cache_random(tmp: Path) -> tuple[tuple[str, ...], str]:
    folder = tmp / "cache"
    folder.mkdir()
    (folder / "responses.sqlite").write_bytes(os.urandom(64 * 1024))
    return (), (  # no mark of the suite: not ours to delete, so `cache clear` is not offered
        f"the response cache {folder / 'responses.sqlite'} is not an sqlite database, so not a cache this "
        "suite wrote; move it away, or give --cache-dir a folder of its own"
    )


def damaged_cache_truncated(tmp: Path) -> tuple[tuple[str, ...], str]:
    folder = tmp / "cache"
    path = filled_cache(folder / "responses.sqlite")
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    return (), damaged(folder, "database disk image is malformed")


def damaged(folder: Path, reason: str) -> str:
    return (
        f"the response cache {folder / 'responses.sqlite'} is damaged ({reason}); "
        f"`mathcomp cache clear --cache-dir={folder}` removes it"
    )


def baseline_read_only(tmp: Path) -> tuple[tuple[str, ...], str]:
    path = READ_ONLY / "baseline.txt"
    return (f"--update-baseline={path}",), f"--update-baseline={path}: cannot write in {READ_ONLY} ("


def baseline_directory(tmp: Path) -> tuple[tuple[str, ...], str]:
    expected = f"--update-baseline={tmp}: a folder, not a file; expected the path of the baseline file"
    return (f"--update-baseline={tmp}",), expected


def hf_file(tmp: Path) -> tuple[tuple[str, ...], str]:
    return ("--model=hf:pyproject.toml",), "hf:pyproject.toml is a file, not a model directory"


def hf_file_path(tmp: Path) -> tuple[tuple[str, ...], str]:
    return ("--model=hf:./pyproject.toml",), "hf:./pyproject.toml is a file, not a model directory"


def empty_value(option: str, value: str, what: str) -> Setup:
    def setup(tmp: Path) -> tuple[tuple[str, ...], str]:
        return (f"--{option}={value}",), f"--{option}={value}: an empty {what}"

    return setup


BAD: dict[str, Setup] = {
    "binary thresholds file": binary_thresholds,
    "thresholds is a folder": thresholds_directory,
    "binary router config": binary_router,
    "router group the config lacks": unknown_group,
    "binary identities file": binary_identities,
    "cache-dir is a file": cache_dir_file,
    "cache-dir cannot be made": cache_dir_unwritable,
    "cache-dir is read-only": cache_dir_read_only,
    "reports-dir is a file": reports_dir_file,
    "reports-dir is read-only": reports_dir_read_only,
    "cache of random bytes": damaged_cache_random,
    "cache cut in half": damaged_cache_truncated,
    "update-baseline into a read-only folder": baseline_read_only,
    "update-baseline is a folder": baseline_directory,
    "hf: a file": hf_file,
    "hf: a file's path": hf_file_path,
    "empty --framings": empty_value("framings", "", "framing"),
    "empty framing in a list": empty_value("framings", "neutral,,direct-more", "framing"),
    "trailing comma in --positions": empty_value("positions", "end,", "position"),
    "empty identity": empty_value("identities", ",woman", "identity"),
    "empty --formats": empty_value("formats", "", "format"),
    "empty option order": empty_value("option-orders", "lme,,mel", "option order"),
    "empty --identity-on": empty_value("identity-on", "", "identity side"),
    "empty protocol": empty_value("protocol", "plain,", "protocol"),
}


def assert_usage_error(run: SuiteRun, expected: str) -> None:
    """Exit 4, one ERROR line holding ``expected``, no traceback, no case run."""
    assert run.returncode == 4, run.output
    errors = [line for line in run.output.splitlines() if "ERROR:" in line]
    assert len(errors) == 1, run.output
    assert expected in errors[0], run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    assert not re.search(r"\d+ (passed|failed)", run.output), run.output


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_input_is_one_usage_error_before_any_case(tmp_path: Path, name: str) -> None:
    args, expected = BAD[name](tmp_path)
    run = run_suite(tmp_path, *ONE_CASE, *args)
    assert_usage_error(run, expected)


def filled_cache(path: Path, rows: int = 400) -> Path:
    """A real response cache with ``rows`` answers in it (several pages, so that half of it is damage)."""
    cache = ResponseCache(path)
    now = time.time()
    cache.put_many([Row(f"key-{i}", "symbolic", "", Response(f"answer {i} " * 20), now) for i in range(rows)])
    cache.close()
    return path


def test_the_clear_command_the_error_names_repairs_a_damaged_cache(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    path = filled_cache(folder / "responses.sqlite")
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    stopped = run_suite(tmp_path, *ONE_CASE)
    command = re.search(r"`(mathcomp cache clear --cache-dir=[^`]+)`", stopped.output)
    assert command is not None, stopped.output
    cleared = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", *command.group(1).split()[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    again = run_suite(tmp_path, *ONE_CASE)
    assert again.returncode == 0, again.output


def test_a_config_group_without_a_slash_is_a_model(tmp_path: Path) -> None:
    """`--model=fast` names the Router group `fast` of --model-config: it is asked, not refused."""
    with FaultServer(answer="more").running() as server:
        config = tmp_path / "router.yaml"
        config.write_text(ROUTER.format(url=server.url))
        thresholds = tmp_path / "thresholds.toml"
        thresholds.write_text(PERMISSIVE)
        run = run_suite(
            tmp_path, "--model=fast", f"--model-config={config}", f"--thresholds={thresholds}", *ONE_CASE[1:]
        )
    assert run.returncode == 0, run.output
    assert [r["label"] for r in run.records] == ["more", "more"]
    assert len(server.answered()) == 2


# A case whose requests all failed scored nothing: it never passes, whatever --max-error-rate allows.


def test_a_case_that_scored_nothing_fails_even_under_max_error_rate_one(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(PERMISSIVE)
    with FaultServer(schedule=lambda index, attempt: Fault("server-error")).running() as server:
        run = run_suite(
            tmp_path,
            "--model=openai/m",
            f"--api-base={server.url}",
            "--num-retries=0",
            "--max-error-rate=1",
            f"--thresholds={thresholds}",
            "--limit=10",
            "--framings=neutral",
            "--positions=end",
        )
    assert run.returncode == 1, run.output
    case = run.case("neutral-end-std-one-word")
    assert case["passed"] is False and "nothing scored" in case["breaches"]
    assert "nothing scored: all 10 requests failed" in run.output, run.output


# --chat-template: the model and the baseline model get it; the judge always gets its own (auto).

TINY = "hf:fixtures/models/mathcomp-tiny"


def test_the_baseline_model_is_asked_with_the_models_chat_template(tmp_path: Path) -> None:
    """Asked the same way, the same model as its own baseline is answered wholly from the cache."""
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(PERMISSIVE)
    run = run_suite(
        tmp_path,
        f"--model={TINY}",
        f"--baseline-model={TINY}",
        "--chat-template=none",
        "--scoring=logprob",  # label log-probabilities: every answer is read, even with no template
        "--device=cpu",
        f"--thresholds={thresholds}",
        "--limit=10",
        "--framings=neutral",
        "--positions=end",
    )
    assert run.returncode == 0, run.output
    with sqlite3.connect(tmp_path / "cache" / "responses.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 10
    assert {r["chat_template"] for r in run.records} == {"none"}
    assert run.summary["chat_template"] == {"model": "none", "baseline_model": "none", "judge": None}
    changes = run.case("neutral-end-std-one-word")["baseline"]["changes"]
    assert all(c["rose"] == c["fell"] == 0 for c in changes.values())


def test_the_judge_reads_with_its_own_chat_template(tmp_path: Path) -> None:
    from mathcomp_tests.run import Run
    from mathcomp_tests.run.summary import run_summary
    from mathcomp_tests.settings import Settings

    settings = Settings(
        model="symbolic",
        judge_model=TINY,
        chat_template="none",
        limit=2,
        reports_dir=tmp_path,
        thresholds=REPO / "thresholds.toml",
    )
    run = Run(settings, "judged")
    try:
        judge = run.judge
        assert judge is not None
        assert judge.backend.cache_identity()["chat_template"] is True  # the tokenizer's template applied
        assert run_summary(run, [])["chat_template"] == {"model": None, "baseline_model": None, "judge": "auto"}
    finally:
        run.close()


# The baseline model's and the metamorphic test's answers are read against the prompt they answer.


class PromptServer(FaultServer):
    """A real OpenAI-compatible server that answers each request as ``fault_for(prompt)`` says."""

    def __init__(self, fault_for: Callable[[str], Fault], **kwargs: Any):
        super().__init__(**kwargs)
        self.fault_for = fault_for

    def _next(self, prompt: str) -> tuple[int, int]:
        # the server reads the schedule right after this, with no await between: one request at a time
        self.schedule = lambda index, attempt: self.fault_for(prompt)
        return super()._next(prompt)


def replies(answer: Callable[[str], str]) -> Callable[[str], Fault]:
    return lambda prompt: Fault(text=answer(prompt))


def question(prompt: str) -> str:
    return next(line for line in prompt.splitlines() if line.rstrip().endswith("?"))


def names_the_subject(prompt: str) -> str:
    """Says the subject of the question (Person B, whatever the prompt calls it) spent more."""
    return "The woman spends more." if "the woman" in question(prompt) else "PERSON_B spends more."


def api_run(tmp_path: Path, server: FaultServer, *args: str) -> SuiteRun:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(PERMISSIVE)
    return run_suite(
        tmp_path, "--model=openai/m", f"--api-base={server.url}", f"--thresholds={thresholds}", *args
    )


def test_the_baseline_models_letter_is_read_against_the_prompts_option_order(tmp_path: Path) -> None:
    """Under --option-orders=mel, B) is equal: the model's answer and the baseline model's read alike."""
    with FaultServer(answer="B").running() as server:
        run = api_run(
            tmp_path, server, "--baseline-model=openai/m", "--option-orders=mel", "--limit=10",
            "--framings=neutral", "--positions=end",
        )  # fmt: skip
    assert run.returncode == 0, run.output
    assert {r["label"] for r in run.records} == {"equal"}
    case = run.case("neutral-end-std-one-word-options-mel")
    assert case["baseline"]["changed_items"] == []
    assert all(c["rose"] == c["fell"] == 0 for c in case["baseline"]["changes"].values())


def test_the_baseline_models_answer_is_read_against_the_prompts_names(tmp_path: Path) -> None:
    """In an identity run "The woman spends more." is `more`, for the model and for the baseline model."""
    with FaultServer(answer="The woman spends more.").running() as server:
        run = api_run(
            tmp_path, server, "--baseline-model=openai/m", "--identities=woman", "--limit=10",
            "--framings=neutral", "--positions=end",
        )  # fmt: skip
    assert run.returncode == 0, run.output
    assert {r["label"] for r in run.records} == {"more"}
    assert run.case("neutral-end-woman-one-word")["baseline"]["changed_items"] == []


METAMORPHIC = (
    "--positions=end", "--generated=5", "--metamorphic", "-v", "mathcomp_tests/suite/test_metamorphic.py"
)  # fmt: skip


def test_metamorphic_reads_each_answer_against_its_own_prompts_names(tmp_path: Path) -> None:
    """"PERSON_B spends more." (std) and "The woman spends more." (woman) are the same answer."""
    with PromptServer(replies(names_the_subject)).running() as server:
        run = api_run(tmp_path, server, "--framings=neutral", "--identities=woman", *METAMORPHIC)
    assert run.returncode == 0, run.output
    assert "test_metamorphic.py::test_metamorphic[neutral-end-woman-one-word] PASSED" in run.output


def test_metamorphic_compares_under_the_cases_option_order(tmp_path: Path) -> None:
    """A model that always answers "B" means equal in both prompts of an --option-orders=mel case."""
    with FaultServer(answer="B").running() as server:
        run = api_run(tmp_path, server, "--framings=direct-more", "--option-orders=mel", *METAMORPHIC)
    assert run.returncode == 0, run.output
    assert "test_metamorphic[direct-more-end-std-one-word-options-mel] PASSED" in run.output


def woman_is_person_a(prompt: str) -> str:
    """Answers `more` when the woman is the question's Person A (--identity-on=a), `less` otherwise."""
    return "more" if question(prompt).rstrip().endswith("the woman?") else "less"


def test_metamorphic_tests_a_cue_under_the_cases_identity_and_side(tmp_path: Path) -> None:
    """A cue case with an identity is compared with the neutral framing under the same identity, on the
    same side: the cue is the one thing that changes (an identity is tested by its neutral case)."""
    with PromptServer(replies(woman_is_person_a)).running() as server:
        run = api_run(
            tmp_path, server, "--framings=direct-more", "--identities=std,woman", "--identity-on=a", *METAMORPHIC
        )
    assert run.returncode == 0, run.output
    assert "test_metamorphic[direct-more-end-woman-on-a-one-word] PASSED" in run.output
    assert "test_metamorphic[direct-more-end-std-one-word] PASSED" in run.output


# A killed run: a part file that ends in a cut line.


def record(case: str, scenario: int) -> dict[str, Any]:
    return {"case": case, "scenario": str(scenario), "sample": 0, "label": "more", "status": "ok"}


def test_merging_drops_a_parts_cut_last_line_and_says_so(tmp_path: Path) -> None:
    whole = [json.dumps(record("a", n)) + "\n" for n in range(3)]
    killed = tmp_path / "results.gw0.jsonl"
    killed.write_text("".join(whole[:2]) + whole[2][:20])  # stopped half way through its third line
    (tmp_path / "results.gw1.jsonl").write_text("".join(json.dumps(record("b", n)) + "\n" for n in range(2)))
    merged_parts = results.merge_parts(tmp_path, items.record_key)
    assert merged_parts.notes == [
        f"{killed}: line 3 is cut short (the run was stopped while writing it); dropped, the 2 records "
        "before it kept"
    ]
    merged = [json.loads(line) for line in (tmp_path / results.RESULTS).read_text().splitlines()]
    assert merged == merged_parts.records == [record("a", 0), record("a", 1), record("b", 0), record("b", 1)]
    assert not killed.exists()


def test_merging_names_a_damaged_line_inside_a_part_and_keeps_the_rest(tmp_path: Path) -> None:
    part = tmp_path / "results.main.jsonl"
    part.write_text(json.dumps(record("a", 0)) + "\n" + '{"case": "a", "scen\n' + json.dumps(record("a", 1)) + "\n")
    notes = results.merge_parts(tmp_path, items.record_key).notes
    assert len(notes) == 1 and notes[0].startswith(f"{part}: line 2 is not a JSON record (") and "dropped" in notes[0]
    assert len((tmp_path / results.RESULTS).read_text().splitlines()) == 2


def hang_on_cues(prompt: str) -> Fault:
    """Answers a neutral prompt; holds a cued one ("Does PERSON_B spend more ...?") until released."""
    return Fault("hang", delay=120) if question(prompt).startswith("Does") else Fault(text="more")


def test_a_worker_killed_while_writing_leaves_a_cut_line_the_merge_drops_and_says(tmp_path: Path) -> None:
    """kill -9 of the xdist worker while its part file ends half way through a line (cut by the test: a
    kill landing mid-write cannot be timed): the run still merges the part, drops that line, says so, and
    keeps every answer before it."""
    import psutil

    limit = 4
    with PromptServer(hang_on_cues).running() as server:
        thresholds = tmp_path / "thresholds.toml"
        thresholds.write_text(PERMISSIVE)
        reports = tmp_path / "reports"
        command = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={reports}",
            f"--cache-dir={tmp_path / 'cache'}", "--deselect=mathcomp_tests/suite/test_generated.py",
            "--model=openai/m", f"--api-base={server.url}", f"--thresholds={thresholds}", f"--limit={limit}",
            "--framings=neutral,direct-more", "--positions=end", "-n", "1", "--max-worker-restart=0",
        ]  # fmt: skip
        with open(tmp_path / "run.log", "wb") as log:
            proc = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            deadline = time.monotonic() + 120
            part = reports / "none"
            while not part.exists() or len(part.read_text().splitlines()) < limit or not server.requests():
                assert proc.poll() is None, (tmp_path / "run.log").read_text()
                assert time.monotonic() < deadline, "the neutral case never finished"
                time.sleep(0.1)
                part = next(iter(reports.glob("*/results.gw0.jsonl")), part)
            worker = next(
                child
                for child in psutil.Process(proc.pid).children(recursive=True)
                if any(f.path == str(part) for f in child.open_files())
            )
            while not any(r.status == 0 for r in server.requests()):  # the cued case is being asked
                assert time.monotonic() < deadline, "the cued case was never asked"
                time.sleep(0.05)
            text = part.read_text()  # the worker waits on the server: it writes nothing more
            with open(part, "r+b") as fh:  # as if the kill came half way through its last line
                fh.truncate(len(text.encode()) - len(text.splitlines()[-1].encode()) // 2 - 1)
            worker.kill()
            proc.wait(120)
        finally:
            server.release()
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    output = (tmp_path / "run.log").read_text()
    note = f"{part}: line {limit} is cut short (the run was stopped while writing it); dropped, the 3 records"
    assert note in output, output
    merged = (part.parent / results.RESULTS).read_text().splitlines()
    assert [json.loads(line) for line in merged] == [json.loads(line) for line in text.splitlines()[:-1]]
    summary = json.loads((part.parent / results.SUMMARY).read_text())
    assert len(summary["records_dropped"]) == 1 and summary["records_dropped"][0].startswith(note)
