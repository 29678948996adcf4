"""What a model is asked and how its answers are read, when the input is unusual: a case whose every
request failed, a chat template set for the model (and for its baseline, not for the judge), and answers
read against the names and option order of the prompt they answer (the baseline model's, the metamorphic
test's).

The suite runs the way a user runs it, from the repository root, against a real OpenAI-compatible server
on 127.0.0.1 or the tiny demo model (tests/test_bad_inputs.py holds the options and files that stop a run).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers.fault_server import Fault, FaultServer
from helpers.prompt_server import PromptServer, question, replies
from helpers.suite_runner import REPO, SuiteRun, run_suite

PERMISSIVE = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n"


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
    from mathcomp_tests.run.facts import facts_of
    from mathcomp_tests.run.orchestrator import Run
    from mathcomp_tests.run.summary import SessionFacts, run_summary
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
        summary = run_summary(facts_of(run), SessionFacts(stopped=None, selected=0, reported=0), [])
        assert summary["chat_template"] == {"model": None, "baseline_model": None, "judge": "auto"}
    finally:
        run.close()


# The baseline model's and the metamorphic test's answers are read against the prompt they answer.


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
