"""--batch against provider faults, on both providers' FAKES (tests/helpers/fake_batch_server.py,
fake_anthropic_server.py): results that are gone (404), garbage, duplicate and stranger result lines, a
batch that fails as a whole, and --batch-poll without --batch. Each fault is one line, never a traceback,
and no prompt is lost or answered twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.batch_waits import all_answered
from helpers.cache_rows import cached_rows
from helpers.fake_anthropic_server import AnthropicServer
from helpers.fake_batch_server import BatchServer
from helpers.suite_runner import SuiteRun, run_suite
from helpers.usage import assert_usage_error

LIMIT = 6
CASES = 2
PROMPTS = LIMIT * CASES
OPENAI_KEY = "sk-openai-test-5a4b3c2d1e"
ANTHROPIC_KEY = "sk-ant-test-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)


@dataclass
class Provider:
    """One provider's fake, and how a run names it."""

    name: str
    server: BatchServer | AnthropicServer

    def args(self, tmp_path: Path, *more: str) -> tuple[str, ...]:
        thresholds = tmp_path / "thresholds.toml"
        thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
        if isinstance(self.server, AnthropicServer):
            model, base = "anthropic/claude-haiku-4-5", self.server.base
        else:
            model, base = "openai/gpt-4o-mini", self.server.url
        return (
            f"--model={model}",
            f"--api-base={base}",
            f"--limit={LIMIT}",
            "--framings=neutral,direct-more",
            "--positions=end",
            "--batch",
            "--batch-poll=0.1",
            f"--thresholds={thresholds}",
            *more,
        )

    def live(self) -> int:
        """Live requests the fake received."""
        return self.server.chat_requests() if isinstance(self.server, BatchServer) else self.server.live_requests()

    def size(self, batch_id: str) -> int:
        if isinstance(self.server, BatchServer):
            return self.server.batch_prompts(batch_id)
        return self.server.batch_size(batch_id)


def _provider(name: str, **faults: Any) -> Provider:
    return Provider(name, AnthropicServer(**faults) if name == "anthropic" else BatchServer(**faults))


BOTH = pytest.mark.parametrize("name", ["openai", "anthropic"])


def _lines(run: SuiteRun, text: str) -> list[str]:
    return [line for line in run.output.splitlines() if text in line]


def _record(tmp_path: Path, batch: str) -> dict[str, Any]:
    found = json.loads((tmp_path / "cache" / "batches" / f"{batch}.json").read_text())
    assert isinstance(found, dict)
    return found


def _incomplete_in_one_line(run: SuiteRun, said: str) -> str:
    """The run stopped INCOMPLETE (exit 2, interrupted as when --batch-wait runs out; not 3, pytest's
    internal error) and said why in one line."""
    assert run.returncode == 2, run.output[-3000:]
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output, run.output[-3000:]
    assert run.summary["status"] == "incomplete"
    (reason,) = [r for r in run.summary["incomplete_reasons"] if said in r]
    assert len(_lines(run, said)) >= 1, run.output[-3000:]
    return str(reason)


@BOTH
def test_results_gone_for_good_stop_the_run_then_the_prompts_are_sent_again(name: str, tmp_path: Path) -> None:
    """The first batch's results answer 404: the run stops INCOMPLETE in one line with the record kept open;
    the next run tries again, and when they are still gone sends the prompts again, said in one line."""
    provider = _provider(name, **{"output_gone" if name == "openai" else "results_gone": lambda n: n == 0})
    with provider.server.running():
        first = run_suite(tmp_path, *provider.args(tmp_path))
        (batch,) = provider.server.created
        record = _record(tmp_path, batch)
        second = run_suite(tmp_path, *provider.args(tmp_path))
    reason = _incomplete_in_one_line(first, f"batch {batch}: its results could not be read")
    assert "the next run tries again" in reason and "404" in reason, reason
    assert not record["done"], "the batch stays recorded for the next run"
    assert first.records == [] and provider.live() == 0

    all_answered(second, PROMPTS)
    said = _lines(second, f"batch {batch}")
    tries = [line for line in said if "its results could not be read (try" in line]
    assert [("try 1 of 3" in t, "try 2 of 3" in t) for t in tries] == [(True, False), (False, True)], said
    gave_up = [line for line in said if "could not be read in 2 runs" in line]
    assert len(gave_up) == 1 and f"{PROMPTS} of its {PROMPTS} requests unanswered, sent again" in gave_up[0], said
    assert len(provider.server.created) == 2 and provider.size(provider.server.created[1]) == PROMPTS
    closed = _record(tmp_path, batch)
    assert closed["done"] and closed["outcome"] == "unreadable"
    assert provider.live() == 0


def test_results_back_on_the_next_run_are_collected_without_a_new_batch(tmp_path: Path) -> None:
    gone = [True]
    provider = _provider("openai", output_gone=lambda n: gone[0])
    with provider.server.running():
        first = run_suite(tmp_path, *provider.args(tmp_path))
        gone[0] = False
        second = run_suite(tmp_path, *provider.args(tmp_path))
    (batch,) = provider.server.created
    _incomplete_in_one_line(first, f"batch {batch}: its results could not be read")
    all_answered(second, PROMPTS)
    assert f"batch {batch}: resumed ({PROMPTS} requests" in second.output
    assert second.summary["batch"]["requests_sent"] == 0 and provider.live() == 0


def _tamper_once(name: str) -> Callable[[list[str]], list[str]]:
    """The first results file only: line 2 not JSON, line 3 not a result, a second answer to line 1's
    request and an answer to a request nobody sent added at the end (lines 13 and 14)."""
    done: list[bool] = []

    def tamper(lines: list[str]) -> list[str]:
        if done:
            return lines
        done.append(True)
        first = json.loads(lines[0])
        twin = json.loads(lines[0])
        if name == "openai":
            twin["response"]["body"]["choices"][0]["message"]["content"] = "a second answer"
        else:
            twin["result"]["message"]["content"][0]["text"] = "a second answer"
        stranger = {**first, "custom_id": "a-request-nobody-sent"}
        shape = {"custom_id": json.loads(lines[2])["custom_id"], "response" if name == "openai" else "result": []}
        return [lines[0], "this is not json {", json.dumps(shape), *lines[3:], json.dumps(twin), json.dumps(stranger)]

    return tamper


@BOTH
def test_garbage_duplicate_and_stranger_result_lines_are_each_said(name: str, tmp_path: Path) -> None:
    provider = _provider(name, tamper=_tamper_once(name))
    with provider.server.running():
        run = run_suite(tmp_path, *provider.args(tmp_path))
    all_answered(run, PROMPTS)
    first, second = provider.server.created
    where = "output file" if name == "openai" else "results"
    bad = _lines(run, f"batch {first}: {where} line")
    assert len(bad) == 4, run.output[-3000:]
    assert "line 2: not JSON" in bad[0] and "line 3: not a batch result" in bad[1], bad
    assert "line 13: a second result for request" in bad[2] and "the first is kept" in bad[2], bad
    assert "line 14: a result for a request this batch did not hold" in bad[3], bad
    assert "a-request-nobody-sent" in bad[3] and "ignored" in bad[3], bad
    assert provider.size(second) == 2, "the two unreadable lines' requests went into a later batch"
    assert not [r for r in run.records if r["raw"] == "a second answer"], "the first answer is the one kept"
    assert run.summary["batch"]["answered"] == PROMPTS
    assert cached_rows(tmp_path / "cache" / "responses.sqlite") == PROMPTS, "the stranger was not cached"
    assert provider.live() == 0


def test_a_failed_batch_says_the_provider_s_error_and_goes_live_under_fallback_live(tmp_path: Path) -> None:
    """OpenAI fails a batch as a whole (its input did not validate): the provider's error is shown
    (redacted, printable), and with --batch-fallback=live its prompts are asked live, not batched again."""
    provider = _provider(
        "openai",
        outcome=lambda n: "failed",
        failure=f"no batches for this project (key {OPENAI_KEY})\x1b[2J",
    )
    with provider.server.running():
        run = run_suite(tmp_path, *provider.args(tmp_path, "--batch-fallback=live"))
    all_answered(run, PROMPTS)
    (batch,) = provider.server.created
    (said,) = _lines(run, f"batch {batch} failed:")
    assert f"{PROMPTS} of its {PROMPTS} requests unanswered, asked live" in said, said
    assert "no batches for this project (key <OPENAI_API_KEY>)\\x1b[2J" in said, said
    assert OPENAI_KEY not in run.output and "\x1b[2J" not in run.output
    assert provider.live() == PROMPTS


def test_a_failed_batch_is_sent_again_with_the_provider_s_error_said(tmp_path: Path) -> None:
    provider = _provider("openai", outcome=lambda n: "failed" if n == 0 else "completed")
    with provider.server.running():
        run = run_suite(tmp_path, *provider.args(tmp_path))
    all_answered(run, PROMPTS)
    first, _ = provider.server.created
    (said,) = _lines(run, f"batch {first} failed:")
    assert "sent again" in said and "invalid_request: Model 'gpt-4o-mini' is not available" in said, said


def test_an_expired_message_batch_goes_live_under_fallback_live(tmp_path: Path) -> None:
    provider = _provider("anthropic", outcome=lambda n: "expired")
    with provider.server.running():
        run = run_suite(tmp_path, *provider.args(tmp_path, "--batch-fallback=live"))
    all_answered(run, PROMPTS)
    (batch,) = provider.server.created
    (said,) = _lines(run, f"batch {batch} expired:")
    assert f"{PROMPTS - PROMPTS // 2} of its {PROMPTS} requests unanswered, asked live" in said, said
    assert provider.live() == PROMPTS - PROMPTS // 2


def test_batch_poll_without_batch_is_a_usage_error(tmp_path: Path) -> None:
    assert_usage_error(
        run_suite(tmp_path, "--limit=2", "--model=symbolic", "--batch-poll=5"),
        "--batch-poll=5.0 applies only with --batch",
    )
