"""A night ends in bounded time whatever the model server does: holds every request open while its model
list still answers, or answers nothing but errors. What was answered before stays in the cache.

The servers are fakes (tests/helpers/fault_server.py): real HTTP servers on 127.0.0.1 that misbehave on a
schedule; the suite runs as a user runs it, in a subprocess. The bound with the default options is
measured by `python -m benchmarks.bounded_nights` (it takes minutes); here the timeouts are scaled down.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from helpers.cache_rows import cached_rows
from helpers.fault_server import OK, Fault, FaultServer
from helpers.suite_runner import SuiteRun, run_suite
from test_batched import _listed

ANSWERED = 4
"""Prompts answered before the server stalls."""
LIMIT = 12
SERVER_TIMEOUT = 3


def _thresholds(tmp_path: Path) -> Path:
    """Ceilings nothing here breaches: what is looked at is how the run ends, not its numbers."""
    path = tmp_path / "thresholds.toml"
    path.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    return path


def _args(tmp_path: Path, server: FaultServer, batching: str, *more: str) -> list[str]:
    return [
        "--model=openai/tiny",
        f"--api-base={server.url}",
        f"--api-batching={batching}",
        "--framings=neutral",
        "--positions=end",
        f"--limit={LIMIT}",
        "--max-concurrency=2",
        "--batch-size=2",
        f"--thresholds={_thresholds(tmp_path)}",
        *more,
    ]


def stalls(index: int, attempt: int) -> Fault:
    """The first prompts are answered; every request after them is held open (the fake's lifetime)."""
    return OK if index < ANSWERED else Fault("hang", delay=600)


def _gone_line(run: SuiteRun) -> str:
    """The one line that says why the run stopped."""
    lines = [line for line in run.output.splitlines() if "Interrupted: the model server at" in line]
    assert len(lines) == 1, run.output
    return lines[0]


@pytest.mark.parametrize("batching", ["chat", "completions"])
def test_a_server_that_holds_every_request_ends_the_run_within_the_timeout_of_its_last_answer(
    tmp_path: Path, batching: str
) -> None:
    server = FaultServer(schedule=stalls, models=_listed())
    with server.running():
        args = _args(tmp_path, server, batching, f"--server-timeout={SERVER_TIMEOUT}")
        run = run_suite(tmp_path, *args, timeout=120)  # hang guard: the old code never ended, this raised
        ended = time.time()
        last_answer = max(r.end for r in server.answered())
        asked = len(server.requests())
    assert run.returncode != 0, run.output
    line = _gone_line(run)
    silent = re.search(rf"stopped answering \(no answer for (\d+) s \(--server-timeout={SERVER_TIMEOUT}\)\)", line)
    assert silent and int(silent.group(1)) >= SERVER_TIMEOUT, line
    assert "a rerun asks only for the rest" in line
    assert asked > ANSWERED // 2, "requests past the answered ones were sent, and held"
    assert ended - last_answer >= SERVER_TIMEOUT, "it waited out the timeout after the last answer"
    answered = sum(r.prompts for r in server.answered())
    assert answered == ANSWERED == cached_rows(tmp_path / "cache" / "responses.sqlite")

    again = FaultServer(models=_listed(), port=server.port)
    with again.running():
        rerun = run_suite(tmp_path, *args)
    assert rerun.returncode == 0, rerun.output
    assert sum(r.prompts for r in again.requests()) == LIMIT - ANSWERED, "answers before the stall are kept"


def test_without_a_cache_the_error_promises_no_resume(tmp_path: Path) -> None:
    with FaultServer(schedule=stalls, models=_listed()).running() as server:
        run = run_suite(
            tmp_path,
            *_args(tmp_path, server, "chat", f"--server-timeout={SERVER_TIMEOUT}"),
            cache=False,
            timeout=120,
        )
    line = _gone_line(run)
    assert "no answer for" in line and "response cache" not in line and "rerun asks only" not in line
    assert "nothing is cached under --no-cache, so a rerun asks for every answer again" in line


STREAK = 4
RETRIES = 1
IN_FLIGHT = 4


@pytest.mark.parametrize("batching", ["chat", "completions"])
@pytest.mark.parametrize(("fault", "status"), [("server-error", 500), ("rate-limit", 429)])
def test_a_server_that_answers_only_errors_is_down_after_a_streak(
    tmp_path: Path, batching: str, fault: str, status: int
) -> None:
    server = FaultServer(schedule=lambda index, attempt: Fault(fault), models=_listed())  # type: ignore[arg-type]
    with server.running():
        args = _args(
            tmp_path,
            server,
            batching,
            "--limit=40",
            f"--max-error-streak={STREAK}",
            f"--num-retries={RETRIES}",
        )
        args = [a for a in args if not a.startswith("--max-concurrency")] + [f"--max-concurrency={IN_FLIGHT}"]
        run = run_suite(tmp_path, *args, timeout=120)  # hang guard
        sent = len(server.requests())
    line = _gone_line(run)
    assert f"error replies in a row and no answer: HTTP {status} x" in line, line
    assert f"(--max-error-streak={STREAK})" in line
    # A chat request counts once, after litellm's retries; the batched client counts each attempt. Either
    # way the streak plus what was in flight bounds what was sent (40 prompts were asked 80 times before).
    per_count = RETRIES + 1 if batching == "chat" else 1
    assert sent <= (STREAK + IN_FLIGHT) * per_count, sent


def recovers(index: int, attempt: int) -> Fault:
    """Three prompts in a row fail, one is answered, three more fail: six errors, never four in a row."""
    if index in (0, 1, 2):
        return Fault("server-error")
    if index in (4, 5, 6):
        return Fault("rate-limit")
    return OK


@pytest.mark.parametrize("batching", ["chat", "completions"])
def test_errors_with_answers_between_are_not_a_server_down(tmp_path: Path, batching: str) -> None:
    server = FaultServer(schedule=recovers, models=_listed())
    with server.running():
        args = _args(tmp_path, server, batching, "--max-error-streak=4", "--num-retries=0")
        args = [a for a in args if not a.startswith(("--max-concurrency", "--batch-size"))]
        run = run_suite(tmp_path, *args, "--max-concurrency=1", "--batch-size=1", timeout=120)
    assert run.returncode == 0, run.output
    assert "stopped answering" not in run.output
    statuses = [r["status"] for r in run.records]
    assert len(statuses) == LIMIT and statuses.count("error") == 6, statuses


THOUGHTS = "Alice has 3 and Bob has 5 so Alice has fewer than Bob . Answer : less"


def test_a_long_generation_that_makes_progress_is_not_cut(tmp_path: Path) -> None:
    """Chain-of-thought on the batched path: each request takes longer than --server-timeout, but it is
    streamed and every chunk of tokens counts as an answer (unstreamed, the run would stop)."""
    words = len(THOUGHTS.split())
    server = FaultServer(models=_listed(), answer=THOUGHTS, stream_interval=0.3)
    with server.running():
        args = _args(tmp_path, server, "completions", "--formats=cot", "--limit=4", "--server-timeout=2")
        run = run_suite(tmp_path, *args, timeout=120)
        requests = server.requests()
    assert run.returncode == 0, run.output
    assert requests and all(r.end - r.start >= 0.3 * (words - 1) > 2 for r in requests), "each took longer"
    assert [r["raw"] for r in run.records] == [THOUGHTS] * 4, "the chunks make the whole answer"
