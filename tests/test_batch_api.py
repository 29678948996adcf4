"""--batch: a whole run answered through a FAKE of OpenAI's Files and Batches endpoints (tests/helpers/
fake_batch_server.py), a rerun that sends nothing, a run killed while it waits then resumed without a new
batch, an expired batch, a batch with failed requests, --batch-wait running out, and the batch price."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from helpers.batch_waits import all_answered, cancel_mid_wait, kill_while_waiting
from helpers.fake_batch_server import BatchServer
from helpers.fault_server import OK, Fault
from helpers.suite_runner import run_suite
from helpers.usage import assert_usage_error, refused

from mathcomp_tests.backends.batch.runner import split

LIMIT = 6
CASES = 2
PROMPTS = LIMIT * CASES


def _args(server: BatchServer, tmp_path: Path, *more: str) -> tuple[str, ...]:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    return (
        "--model=openai/gpt-4o-mini",
        f"--api-base={server.url}",
        f"--limit={LIMIT}",
        "--framings=neutral,direct-more",
        "--positions=end",
        "--batch",
        "--batch-poll=0.2",
        f"--thresholds={thresholds}",
        *more,
    )


def test_a_whole_run_by_batch_then_a_rerun_that_sends_nothing(tmp_path: Path) -> None:
    server = BatchServer(delay=1.0)
    with server.running():
        first = run_suite(tmp_path, *_args(server, tmp_path))
        sent_first = list(server.batch_requests)
        again = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(first, PROMPTS)
    assert server.chat_requests() == 0, "no live completion request: every prompt went by batch"
    (batch,) = server.created
    assert server.batch_prompts(batch) == PROMPTS
    assert f"batch {batch}: created with {PROMPTS} requests" in first.output
    assert f"batch {batch}: completed, {PROMPTS} of {PROMPTS} answered, 0 failed" in first.output
    assert first.summary["batch"]["requests_sent"] == PROMPTS
    assert first.summary["batch"]["batches_created"] == [batch]
    record = json.loads((tmp_path / "cache" / "batches" / f"{batch}.json").read_text())
    assert record["done"] and record["outcome"] == "completed" and len(record["keys"]) == PROMPTS

    all_answered(again, PROMPTS)
    assert server.batch_requests == sent_first, "the rerun asked the provider nothing"
    assert server.chat_requests() == 0
    assert all(r["cached"] for r in again.records)
    assert [r["raw"] for r in again.records] == [r["raw"] for r in first.records]


def test_the_answers_are_the_live_path_s_answers(tmp_path: Path) -> None:
    """A run by batch, then the same run live on the same cache: the live run finds every answer cached
    (the keys are the live path's), and the records cannot tell the two apart but by the price."""
    server = BatchServer()
    with server.running():
        batched = run_suite(tmp_path, *_args(server, tmp_path))
        live_args = [a for a in _args(server, tmp_path) if not a.startswith("--batch")]
        live = run_suite(tmp_path, *live_args)
    all_answered(batched, PROMPTS)
    all_answered(live, PROMPTS)
    assert server.chat_requests() == 0, "the live run asked nothing: the batch answers are under its keys"
    assert live.summary["prompts_sent"] == 0
    strip = ("cached", "run_id", "cost")
    left = [{k: v for k, v in r.items() if k not in strip} for r in batched.records]
    right = [{k: v for k, v in r.items() if k not in strip} for r in live.records]
    assert left == right


def test_xdist_workers_share_one_batch(tmp_path: Path) -> None:
    """Each worker asks for the whole selection: the one that waits second finds it answered."""
    server = BatchServer(delay=1.0)
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path, "-n", "2"))
    all_answered(run, PROMPTS)
    assert len(server.created) == 1, server.created
    assert server.chat_requests() == 0
    batch = run.summary.get("batch")  # the controller's summary adds up what its workers did by batch
    assert batch is not None, "summary.json under -n has no batch section"
    assert batch["batches_created"] == server.created and batch["batches_resumed"] == []
    assert batch["requests_sent"] == server.batch_prompts(server.created[0]) == batch["answered"]
    assert batch["failed"] == 0 and batch["saved_usd"] == pytest.approx(sum(r["cost"] for r in run.records))


def test_killed_while_waiting_then_the_rerun_resumes_the_same_batch(tmp_path: Path) -> None:
    server = BatchServer(delay=600)
    with server.running():
        kill_while_waiting(server, tmp_path, _args(server, tmp_path))
        (batch,) = server.created
        server.delay = 0  # the batch completed while nobody waited
        rerun = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(rerun, PROMPTS)
    assert server.created == [batch], "the rerun created no new batch"
    assert server.chat_requests() == 0
    assert f"batch {batch}: resumed ({PROMPTS} requests" in rerun.output
    assert rerun.summary["batch"]["batches_resumed"] == [batch]
    assert rerun.summary["batch"]["requests_sent"] == 0


def test_batch_wait_runs_out_the_run_is_incomplete_and_the_next_resumes(tmp_path: Path) -> None:
    server = BatchServer(delay=600)
    with server.running():
        waited = run_suite(tmp_path, *_args(server, tmp_path, "--batch-wait=1"))
        server.delay = 0
        resumed = run_suite(tmp_path, *_args(server, tmp_path))
    assert waited.returncode != 0, waited.output
    assert "INCOMPLETE" in waited.output and "--batch-wait=1s ran out with 1 batch(es) still running" in waited.output
    assert waited.summary["status"] == "incomplete"
    assert any("--batch-wait" in reason for reason in waited.summary["incomplete_reasons"])
    all_answered(resumed, PROMPTS)
    assert len(server.created) == 1 and server.chat_requests() == 0


def test_an_expired_batch_is_said_and_its_unanswered_prompts_sent_again(tmp_path: Path) -> None:
    server = BatchServer(outcome=lambda number: "expired" if number == 0 else "completed")
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    first, second = server.created
    assert server.batch_prompts(second) == PROMPTS - PROMPTS // 2
    said = [line for line in run.output.splitlines() if f"batch {first} expired" in line]
    assert len(said) == 1 and f"{PROMPTS - PROMPTS // 2} of its {PROMPTS} requests unanswered" in said[0]
    assert server.chat_requests() == 0


def test_a_cancelled_batch_is_said_and_its_prompts_sent_again(tmp_path: Path) -> None:
    server = BatchServer(delay=600)

    def cancel(batch: str) -> urllib.request.Request:  # as from the provider's console
        return urllib.request.Request(f"{server.url}/batches/{batch}/cancel", method="POST", data=b"")

    with server.running():
        run = cancel_mid_wait(server, tmp_path, _args(server, tmp_path), cancel)
        first = server.created[0]
    all_answered(run, PROMPTS)
    assert len(server.created) == 2 and server.batch_prompts(server.created[1]) == PROMPTS
    said = [line for line in run.output.splitlines() if f"batch {first} cancelled" in line]
    assert len(said) == 1 and f"{PROMPTS} of its {PROMPTS} requests unanswered, sent again" in said[0]


def _two_fail_once(index: int, attempt: int) -> Fault:
    return Fault("server-error") if index < 2 and attempt == 0 else OK


def test_failed_requests_in_a_batch_go_into_a_later_batch(tmp_path: Path) -> None:
    server = BatchServer(schedule=_two_fail_once)
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    first, second = server.created
    assert server.batch_prompts(second) == 2
    assert f"batch {first}: completed, {PROMPTS - 2} of {PROMPTS} answered, 2 failed" in run.output
    assert server.chat_requests() == 0


def test_failed_requests_never_answered_are_item_errors_not_answers(tmp_path: Path) -> None:
    server = BatchServer(schedule=lambda index, attempt: Fault("server-error") if index == 0 else OK)
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path, "--max-error-rate=1"))
    assert len(server.created) == 3, "sent, then sent again twice"
    errors = [r for r in run.records if r["status"] == "error"]
    assert len(errors) == 1 and "no batch answered this request" in errors[0]["error"]
    assert server.chat_requests() == 0


def test_batch_fallback_live_asks_the_failed_requests_live(tmp_path: Path) -> None:
    server = BatchServer(schedule=_two_fail_once)
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path, "--batch-fallback=live"))
    all_answered(run, PROMPTS)
    assert len(server.created) == 1
    assert server.chat_requests() == 2, "the two failed requests, asked live by their case"


def test_batch_answers_cost_the_batch_price(tmp_path: Path) -> None:
    """gpt-4o-mini has batch prices in litellm's map: 7.5e-8 per input token, 3e-7 per output token."""
    server = BatchServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    for record in run.records:
        expected = record["input_tokens"] * 7.5e-8 + record["output_tokens"] * 3e-7
        assert record["cost"] == pytest.approx(expected)
    saved = run.summary["batch"]["saved_usd"]
    assert saved == pytest.approx(sum(r["cost"] for r in run.records))  # half the live price, saved
    said = [line for line in run.output.splitlines() if "answers by batch cost" in line]
    assert len(said) == 1 and "litellm's batch prices" in said[0] and "saved against" in said[0]
    page = (run.run_dir / "report.html").read_text()
    assert f"${saved:.4f} saved" in page and "batch API" in page
    answered = run.summary["batch"]["answered"]
    assert f"{answered} taken from the cache ({answered} of them answered by batch in this run)" in page, (
        "the run that paid for the batch does not read as if it had sent nothing"
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("--model=symbolic", "--batch"), "--batch applies only to an API model"),
        (("--model=symbolic", "--batch-wait=5"), "--batch-wait=5.0 applies only with --batch"),
        (("--model=openai/x", "--batch", "--batch-wait=0"), "--batch-wait=0.0"),
    ],
)
def test_bad_batch_options_are_usage_errors(
    pytester: pytest.Pytester, tmp_path: Path, extra: tuple[str, ...], expected: str
) -> None:
    assert_usage_error(refused(pytester, tmp_path, "--limit=2", *extra), expected)


def test_batch_needs_the_cache(pytester: pytest.Pytester, tmp_path: Path) -> None:
    assert_usage_error(
        refused(pytester, tmp_path, "--limit=2", "--model=openai/x", "--batch", cache=False),
        "--batch needs the response cache",
    )


def test_input_files_are_cut_at_the_request_and_byte_limits() -> None:
    sizes = [10] * 7
    assert split(sizes, max_requests=3, max_bytes=1000) == [[0, 1, 2], [3, 4, 5], [6]]
    assert split(sizes, max_requests=100, max_bytes=25) == [[0, 1], [2, 3], [4, 5], [6]]
    assert split([], max_requests=3, max_bytes=25) == []


def test_each_output_file_is_downloaded_once(tmp_path: Path) -> None:
    """A status check of a completed batch must not download its output file again behind the run's back
    (litellm's retrieve does, for its cost tracking): a nightly output file is up to 200 MB."""
    server = BatchServer(delay=1.0, outcome=lambda number: "expired" if number == 0 else "completed")
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path, "-W", "error::RuntimeWarning"))
    all_answered(run, PROMPTS)
    assert len(server.created) == 2
    downloads = [r for r in server.batch_requests if r.endswith("/content")]
    assert len(downloads) == len(set(downloads)) == 3, downloads  # output and error of the first, output of the second
    assert "never awaited" not in run.output


def test_protocol_turns_go_in_one_round_of_batches_per_turn(tmp_path: Path) -> None:
    """Every case's first turn in one batch, every second turn in the next (not a batch per case and turn),
    exactly the requests the live path sends, and answers the live path reads the same."""
    protocols = "--protocol=plain,cot,evidence-lock,dual-direction,canonicalize"
    server = BatchServer()
    with server.running():
        batched = run_suite(tmp_path / "batch", *_args(server, tmp_path, protocols))
        sizes = [server.batch_prompts(b) for b in server.created]
        again = run_suite(tmp_path / "batch", *_args(server, tmp_path, protocols))
        assert len(server.created) == len(sizes), "the rerun created no batch"
        live = run_suite(tmp_path / "live", *[a for a in _args(server, tmp_path, protocols) if "--batch" not in a])
    assert server.chat_requests() == sum(sizes), "the batches held exactly what the live path asks"
    assert len(sizes) == 2, f"one round per turn: {sizes}"
    assert "batch" in batched.summary and batched.summary["batch"]["requests_sent"] == sum(sizes)
    def plain(record: dict[str, Any]) -> dict[str, Any]:  # what a batch answer may differ in: cached, price
        turns = [{k: v for k, v in t.items() if k not in ("cached", "cost")} for t in record.get("turns") or []]
        return {**{k: v for k, v in record.items() if k not in ("cached", "run_id", "cost")}, "turns": turns}

    for run in (again, live):
        assert [plain(r) for r in batched.records] == [plain(r) for r in run.records]
    assert len(batched.records) == 5 * PROMPTS and not [r for r in batched.records if r["status"] == "error"]
