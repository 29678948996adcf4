"""What the server says it serves: the model its replies name is recorded, and a different one is said.
A server that fails on its model list is not a server the run can trust: one usage error names it."""

from __future__ import annotations

from pathlib import Path

from helpers.fault_server import FaultServer
from helpers.suite_runner import run_suite

NEUTRAL = ("--limit=4", "--framings=neutral", "--positions=end")


def test_replies_that_name_another_model_are_recorded_and_warned_about(tmp_path: Path) -> None:
    with FaultServer(reply_model="other-7b").running() as server:
        run = run_suite(tmp_path, "--model=openai/m", f"--api-base={server.url}", *NEUTRAL)
    assert run.returncode in (0, 1), run.output  # a warning, never an error: servers alias names
    assert run.summary["served_model"] == {"asked": ["m"], "named": ["other-7b"], "differs": True}
    assert "WARNING: the server's replies name the model other-7b, not m as asked" in run.output, run.output
    assert {r["served_model"] for r in run.records} == {"other-7b"}


def test_replies_that_name_the_model_asked_for_need_no_warning(tmp_path: Path) -> None:
    with FaultServer().running() as server:
        run = run_suite(tmp_path, "--model=openai/m", f"--api-base={server.url}", *NEUTRAL)
    assert run.summary["served_model"] == {"asked": ["m"], "named": ["m"], "differs": False}
    assert "WARNING: the server's replies name" not in run.output


def test_a_500_on_the_model_list_is_one_usage_error_naming_the_server(tmp_path: Path) -> None:
    with FaultServer(models_status=500).running() as server:
        run = run_suite(tmp_path, "--model=openai/m", f"--api-base={server.url}", *NEUTRAL)
        asked = server.requests()
    assert run.returncode == 4, run.output
    assert f"the model server at {server.url} answered HTTP 500 to GET {server.url}/models" in run.output
    assert "Traceback" not in run.output and run.output.count("ERROR:") == 1, run.output
    assert asked == [], "no case ran"
