"""A case that read nothing measured nothing: it never passes, and it is never called "at chance"."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_server import Fault, FaultServer
from helpers.suite_runner import run_suite

EVERYTHING_ALLOWED = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n"
NEUTRAL = ("--limit=10", "--framings=neutral", "--positions=end")
CASE = "neutral-end-std-one-word"


def test_every_answer_unreadable_fails_even_when_the_ceilings_allow_it(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(EVERYTHING_ALLOWED)
    with FaultServer(schedule=lambda index, attempt: Fault(text="I would rather not say")).running() as server:
        run = run_suite(
            tmp_path, "--model=openai/m", f"--api-base={server.url}", f"--thresholds={thresholds}", *NEUTRAL
        )
    assert run.returncode == 1, run.output
    case = run.case(CASE)
    assert case["scores"]["invalid_rate"] == 1.0
    assert case["passed"] is False and case["breaches"] == ["nothing read"]
    assert "nothing read: none of the 10 answers could be read" in run.output, run.output
    assert "AT CHANCE" not in run.output
    page = (run.run_dir / "report.html").read_text()  # the suite's own rule, not one of the project's checks
    assert "Cases that measured nothing" in page and "built-in check: a case that measured nothing never" in page
    assert "project&#x27;s own checks" not in page


def test_a_case_whose_every_request_failed_is_not_at_chance(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(EVERYTHING_ALLOWED)
    with FaultServer(schedule=lambda index, attempt: Fault("server-error")).running() as server:
        run = run_suite(
            tmp_path, "--model=openai/m", f"--api-base={server.url}", "--num-retries=0",
            f"--thresholds={thresholds}", *NEUTRAL,
        )  # fmt: skip
    assert run.returncode == 1, run.output
    assert run.case(CASE)["breaches"] == ["nothing scored"]
    assert "AT CHANCE" not in run.output, run.output


def test_a_readable_case_at_chance_still_says_so(tmp_path: Path) -> None:
    """The note stays for what it is for: a model that answers one label whatever it is asked."""
    with FaultServer(answer="more").running() as server:
        run = run_suite(tmp_path, "--model=openai/m", f"--api-base={server.url}", *NEUTRAL)
    assert f"AT CHANCE: {CASE} answers" in run.output, run.output
