"""--batch with an Anthropic model: a whole run answered through a FAKE of Anthropic's Messages and Message
Batches endpoints (tests/helpers/fake_anthropic_server.py), a rerun that sends nothing, the answers the
live path would have read, a run killed while it waits then resumed without a new batch, an expired batch,
errored requests, a cancelled batch, and the batch price."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from helpers.batch_waits import all_answered, cancel_mid_wait, kill_while_waiting
from helpers.fake_anthropic_server import AnthropicServer
from helpers.fault_server import OK, Fault
from helpers.suite_runner import run_suite

LIMIT = 6
CASES = 2
PROMPTS = LIMIT * CASES
KEY = "sk-ant-test-9f8e7d6c5b4a"
"""The key every test sends: it must reach the server and nothing the run writes."""


@pytest.fixture(autouse=True)
def _anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def _args(server: AnthropicServer, tmp_path: Path, *more: str, batch: bool = True) -> tuple[str, ...]:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    return (
        "--model=anthropic/claude-haiku-4-5",
        f"--api-base={server.base}",
        f"--limit={LIMIT}",
        "--framings=neutral,direct-more",
        "--positions=end",
        *(("--batch", "--batch-poll=0.2") if batch else ()),
        f"--thresholds={thresholds}",
        *more,
    )


def _written(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


def test_a_whole_run_by_message_batch_then_a_rerun_that_sends_nothing(tmp_path: Path) -> None:
    server = AnthropicServer(delay=1.0)
    with server.running():
        first = run_suite(tmp_path, *_args(server, tmp_path))
        sent_first = list(server.batch_requests)
        again = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(first, PROMPTS)
    assert server.live_requests() == 0, "no live message request: every prompt went by batch"
    (batch,) = server.created
    assert server.batch_size(batch) == PROMPTS
    assert f"batch {batch}: created with {PROMPTS} requests" in first.output
    assert f"batch {batch}: completed, {PROMPTS} of {PROMPTS} answered, 0 failed" in first.output
    assert first.summary["batch"]["batches_created"] == [batch]
    record = json.loads((tmp_path / "cache" / "batches" / f"{batch}.json").read_text())
    assert record["done"] and record["outcome"] == "completed" and len(record["keys"]) == PROMPTS

    requests = server.batches[batch].requests
    assert sorted(r["custom_id"] for r in requests) == sorted(record["keys"]), "each custom id is its cache key"
    params = requests[0]["params"]
    assert params["model"] == "claude-haiku-4-5" and params["temperature"] == 0.0 and params["max_tokens"] > 0
    (message,) = params["messages"]
    assert message["role"] == "user" and message["content"][0]["type"] == "text", "Anthropic's message form"
    assert "PERSON_B" in message["content"][0]["text"]
    assert all(h.get("x-api-key") == KEY for h in server.headers_seen)
    assert KEY not in _written(tmp_path / "cache") + _written(tmp_path / "reports"), "the key was written down"

    all_answered(again, PROMPTS)
    assert server.batch_requests == sent_first, "the rerun asked the provider nothing"
    assert server.live_requests() == 0 and all(r["cached"] for r in again.records)


def test_batch_answers_are_the_answers_the_live_path_reads(tmp_path: Path) -> None:
    """The same selection by batch and live, each on its own cache: the records differ only in price; then a
    live run on the batch run's cache finds every answer under its own keys."""
    server = AnthropicServer()
    with server.running():
        batched = run_suite(tmp_path, *_args(server, tmp_path))
        live = run_suite(tmp_path / "live", *_args(server, tmp_path, batch=False))
        assert server.live_requests() == PROMPTS
        reread = run_suite(tmp_path, *_args(server, tmp_path, batch=False))
        assert server.live_requests() == PROMPTS, "the live run on the batch cache asked nothing"
    for run in (batched, live, reread):
        all_answered(run, PROMPTS)
    strip = ("cached", "run_id", "cost")
    left = [{k: v for k, v in r.items() if k not in strip} for r in batched.records]
    right = [{k: v for k, v in r.items() if k not in strip} for r in live.records]
    assert left == right
    assert [r["cost"] for r in batched.records] == pytest.approx([r["cost"] / 2 for r in live.records])


def test_killed_while_waiting_then_the_rerun_resumes_the_same_batch(tmp_path: Path) -> None:
    server = AnthropicServer(delay=600)
    with server.running():
        kill_while_waiting(server, tmp_path, _args(server, tmp_path))
        (batch,) = server.created
        server.delay = 0  # the batch ended while nobody waited
        rerun = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(rerun, PROMPTS)
    assert server.created == [batch], "the rerun created no new batch"
    assert f"batch {batch}: resumed ({PROMPTS} requests" in rerun.output
    assert rerun.summary["batch"]["batches_resumed"] == [batch] and rerun.summary["batch"]["requests_sent"] == 0
    assert server.live_requests() == 0


def test_expired_requests_are_said_and_sent_again(tmp_path: Path) -> None:
    server = AnthropicServer(outcome=lambda number: "expired" if number == 0 else "completed")
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    first, second = server.created
    assert server.batch_size(second) == PROMPTS - PROMPTS // 2
    said = [line for line in run.output.splitlines() if f"batch {first} expired" in line]
    assert len(said) == 1 and f"{PROMPTS - PROMPTS // 2} of its {PROMPTS} requests unanswered" in said[0]
    assert server.live_requests() == 0
    results = [r for r in server.batch_requests if r.endswith("/results")]
    assert len(results) == len(set(results)) == 2, "each batch's results read once"


def _two_fail_once(index: int, attempt: int) -> Fault:
    return Fault("server-error") if index < 2 and attempt == 0 else OK


def test_errored_requests_go_into_a_later_batch_or_live(tmp_path: Path) -> None:
    server = AnthropicServer(schedule=_two_fail_once)
    with server.running():
        batched = run_suite(tmp_path / "batch", *_args(server, tmp_path))
        assert len(server.created) == 2 and server.batch_size(server.created[1]) == 2
        assert f"batch {server.created[0]}: completed, {PROMPTS - 2} of {PROMPTS} answered, 2 failed" in batched.output
        assert server.live_requests() == 0
    all_answered(batched, PROMPTS)

    server = AnthropicServer(schedule=_two_fail_once)
    with server.running():
        live = run_suite(tmp_path / "live", *_args(server, tmp_path, "--batch-fallback=live"))
    all_answered(live, PROMPTS)
    assert len(server.created) == 1 and server.live_requests() == 2, "the two errored requests, asked live"


def test_a_cancelled_batch_is_said_and_its_prompts_sent_again(tmp_path: Path) -> None:
    server = AnthropicServer(delay=600)

    def cancel(batch: str) -> urllib.request.Request:  # as from the provider's console
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        url = f"{server.base}/v1/messages/batches/{batch}/cancel"
        return urllib.request.Request(url, method="POST", data=b"", headers=headers)

    with server.running():
        run = cancel_mid_wait(server, tmp_path, _args(server, tmp_path), cancel)
        first = server.created[0]
    all_answered(run, PROMPTS)
    assert len(server.created) == 2 and server.batch_size(server.created[1]) == PROMPTS
    said = [line for line in run.output.splitlines() if f"batch {first} cancelled" in line]
    assert len(said) == 1 and f"{PROMPTS} of its {PROMPTS} requests unanswered, sent again" in said[0]


def test_message_batch_answers_cost_the_batch_price(tmp_path: Path) -> None:
    """claude-haiku-4-5 has batch prices in litellm's map: 5e-7 per input token, 2.5e-6 per output token."""
    server = AnthropicServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    for record in run.records:
        assert record["cost"] == pytest.approx(record["input_tokens"] * 5e-7 + record["output_tokens"] * 2.5e-6)
    saved = run.summary["batch"]["saved_usd"]
    assert saved == pytest.approx(sum(r["cost"] for r in run.records))
    page = (run.run_dir / "report.html").read_text()
    assert f"${saved:.4f} saved" in page and f"{PROMPTS} requests in 1 new batch, 0 resumed" in page


def test_without_a_key_the_run_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    server = AnthropicServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    assert run.returncode != 0 and "INCOMPLETE" in run.output
    assert "--batch with an Anthropic model needs ANTHROPIC_API_KEY" in run.output, run.output[-3000:]
    assert server.created == [] and server.live_requests() == 0
