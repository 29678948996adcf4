"""--batch at its boundaries, end to end on both providers' FAKES (tests/helpers/fake_batch_server.py,
fake_anthropic_server.py): the batch request is the live request (one builder), a download that fails once
is said and tried again, an unreadable batch record or a records folder that takes no file stops the run in
one line before anything is paid, and one more wrapper around the model's backend leaves the batch phase
working."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers.batch_waits import all_answered
from helpers.fake_anthropic_server import AnthropicServer
from helpers.fake_batch_server import BatchServer
from helpers.suite_runner import SuiteRun, run_suite

LIMIT = 4
CASES = 2
PROMPTS = LIMIT * CASES
TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-1a2b3c4d5e")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-5e4d3c2b1a")


def _server(name: str, **faults: Any) -> BatchServer | AnthropicServer:
    return AnthropicServer(**faults) if name == "anthropic" else BatchServer(**faults)


def _args(
    server: BatchServer | AnthropicServer, tmp_path: Path, *more: str, model: str = "", batch: bool = True
) -> tuple[str, ...]:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    if isinstance(server, AnthropicServer):
        model, base = model or "anthropic/claude-haiku-4-5", server.base
    else:
        model, base = model or "openai/gpt-4o-mini", server.url
    return (
        f"--model={model}",
        f"--api-base={base}",
        f"--limit={LIMIT}",
        "--framings=neutral,direct-more",
        "--positions=end",
        *(("--batch", "--batch-poll=0.1") if batch else ()),
        f"--thresholds={thresholds}",
        *more,
    )


def _live(server: BatchServer | AnthropicServer) -> list[dict[str, Any]]:
    return server.message_bodies if isinstance(server, AnthropicServer) else server.chat_bodies


def _stopped_in_one_line(run: SuiteRun, said: str) -> str:
    """The run stopped INCOMPLETE before any case (exit 2, not pytest's internal error 3), its reason one
    line of the output and one sentence of summary.json's incomplete_reasons: that sentence."""
    assert run.returncode == 2, run.output[-3000:]
    assert "INTERNALERROR" not in run.output and "Traceback" not in run.output, run.output[-3000:]
    assert run.summary["status"] == "incomplete" and run.records == []
    (reason,) = [r for r in run.summary["incomplete_reasons"] if said in r]
    assert "\n" not in reason and [line for line in run.output.splitlines() if said in line], run.output[-3000:]
    return str(reason)


BOTH = pytest.mark.parametrize("name", ["openai", "anthropic"])


@pytest.mark.parametrize(
    ("name", "model"), [("openai", "openai/o3-mini"), ("anthropic", "anthropic/claude-haiku-4-5")]
)
def test_each_batch_request_is_the_request_the_live_path_sends(name: str, model: str, tmp_path: Path) -> None:
    """Sampled decodings (a seed, so drop_params) on a model whose parameters litellm maps (o3-mini takes
    max_completion_tokens and no temperature): the batch holds what the live call sends, byte for byte."""
    server = _server(name)
    with server.running():
        batched = run_suite(tmp_path / "batch", *_args(server, tmp_path, "--temperature=0.7", model=model))
        live = run_suite(tmp_path / "live", *_args(server, tmp_path, "--temperature=0.7", model=model, batch=False))
    all_answered(batched, PROMPTS)
    all_answered(live, PROMPTS)

    def key(body: dict[str, Any]) -> str:
        return json.dumps(body, sort_keys=True)

    sent = sorted(_live(server), key=key)
    assert len(sent) == PROMPTS and sorted(server.input_bodies(), key=key) == sent


@BOTH
def test_a_download_that_fails_once_is_said_and_tried_again(name: str, tmp_path: Path) -> None:
    """Collecting is retried like a status check: the failure said in one line, the next check reads them."""
    server = _server(name, download_faults=1)
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    all_answered(run, PROMPTS)
    (batch,) = server.created
    said = [line for line in run.output.splitlines() if f"batch {batch}: its results could not be read" in line]
    assert len(said) == 1 and "HTTP 500" in said[0] and "trying again" in said[0], run.output[-3000:]
    assert run.summary["batch"]["answered"] == PROMPTS and not _live(server)


def test_an_unreadable_batch_record_stops_the_run_before_anything_is_paid(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "batches"
    folder.mkdir(parents=True)
    record = folder / "batch-lost.json"
    record.write_text('{"id": "batch-lost",\n "keys": ["a"\n')  # cut short: its batch may still be running
    server = BatchServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    said = _stopped_in_one_line(run, str(record))
    assert f"{record}: line 3: not JSON" in said and "expected a batch record" in said, said
    assert server.created == [] and server.chat_requests() == 0, "nothing sent while a paid batch may be unread"
    assert record.read_text().startswith('{"id": "batch-lost"'), "the record is kept as it was"


def test_a_records_folder_that_takes_no_file_stops_the_run_before_a_batch_is_created(tmp_path: Path) -> None:
    """A batch created but not recorded would be forgotten and paid again: the folder is checked first."""
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "batches").write_text("a file where the records folder goes\n")
    server = BatchServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path))
    said = _stopped_in_one_line(run, "batch records")
    assert str(tmp_path / "cache" / "batches") in said, said
    assert server.created == [] and server.chat_requests() == 0


def test_one_more_wrapper_around_the_backend_leaves_the_batch_phase_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helpers/wrapped_backend.py wraps the run's model in one more layer (backends/ahead.py's AskedAhead)
    once the plugin made it: every prompt still goes in one batch before the first case."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])))
    server = BatchServer()
    with server.running():
        run = run_suite(tmp_path, *_args(server, tmp_path, "-p", "helpers.wrapped_backend"))
    all_answered(run, PROMPTS)
    assert "wrapped by helpers.wrapped_backend" in run.output, "the wrapper was not installed"
    (batch,) = server.created
    assert server.batch_prompts(batch) == PROMPTS and server.chat_requests() == 0
    assert run.summary["batch"]["batches_created"] == [batch] and run.summary["batch"]["answered"] == PROMPTS
