"""A key planted in OPENAI_API_KEY (or a --model-config) is used for requests and appears in nothing the run
writes or prints: not in an error body, not in an answer that echoes it, whatever path the answer came by."""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
from pathlib import Path

import pytest
from helpers.echo_server import EchoBatchServer, EchoServer
from helpers.fault_server import OK, Fault, FaultServer
from helpers.suite_runner import REPO, SuiteRun, run_suite

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"


def test_a_planted_key_is_sent_but_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"sk-test-PLANTED-{secrets.token_hex(12)}"
    monkeypatch.setenv("OPENAI_API_KEY", key)

    def echo_the_key(index: int, attempt: int) -> Fault:
        """Prompt 0 always fails with the key in the error body (as a provider's auth error does)."""
        if index == 0:
            return Fault("server-error", text=f"Incorrect API key provided: {key}")
        return Fault("rate-limit", retry_after=1) if index == 1 and attempt == 0 else OK

    with FaultServer(schedule=echo_the_key).running() as server:
        run = run_suite(
            tmp_path / "run",
            "--model=openai/gpt-4o-mini",
            f"--api-base={server.url}",
            "--limit=4",
            "--framings=neutral",
            "--positions=end",
            "--num-retries=1",
        )
    assert {r.authorization for r in server.requests()} == {f"Bearer {key}"}, "the key was in use"
    assert run.returncode == 1 and "error_rate" in run.output
    assert any(r["status"] == "error" and "Incorrect API key" in r["error"] for r in run.records)
    usage = run.summary["usage"]
    assert usage["input_tokens"] > 0 and usage["cost_usd"] > 0, "a priced model's run is accounted for"

    written = sorted(p for p in (tmp_path / "run").rglob("*") if p.is_file())
    names = {p.name for p in written}
    assert {"responses.sqlite", "results.jsonl", "summary.json", "report.html"} <= names
    for path in written:
        assert b"sk-test-PLANTED" not in path.read_bytes(), path
    assert "sk-test-PLANTED" not in run.output


# A server (or a proxy before it) that echoes the Authorization header into its answers: the key must leave
# every answer before it is read, cached or written, whichever path the answer came by.

LISTED = [{"id": "tiny", "object": "model", "owned_by": "vllm", "root": str(TOKENIZER), "max_model_len": 1024}]
"""What the echo server lists for the completions path (the demo model's tokenizer renders the prompts)."""


def _echo_key(monkeypatch: pytest.MonkeyPatch, variable: str | None = "OPENAI_API_KEY") -> str:
    key = f"sk-echo-{secrets.token_hex(12)}"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if variable:
        monkeypatch.setenv(variable, key)
    return key


def _common(tmp_path: Path) -> tuple[str, ...]:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    return ("--limit=3", "--framings=neutral", "--positions=end", f"--thresholds={thresholds}")


def _assert_redacted_everywhere(run: SuiteRun, written: Path, key: str, shown: str) -> None:
    """The answers were read with the key taken out and say so; no file under ``written`` nor the terminal
    holds the key."""
    assert run.returncode in (0, 1) and "INTERNALERROR" not in run.output, run.output
    assert run.records and all(r["status"] != "error" for r in run.records), run.records
    for record in run.records:
        assert shown in record["raw"] and record["redacted"] is True, record
    files = sorted(p for p in written.rglob("*") if p.is_file())
    assert {"responses.sqlite", "results.jsonl", "summary.json", "report.html"} <= {p.name for p in files}
    for path in files:
        assert key.encode() not in path.read_bytes() and b"sk-echo-" not in path.read_bytes(), path
    assert "sk-echo-" not in run.output
    with contextlib.closing(sqlite3.connect(written / "cache" / "responses.sqlite")) as db:
        metas = [json.loads(m) for (m,) in db.execute("SELECT meta FROM responses")]
    assert metas and all(m.get("redacted") is True for m in metas), metas


def test_a_key_echoed_into_chat_answers_is_taken_out_before_they_are_read_or_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _echo_key(monkeypatch)
    with EchoServer().running() as server:
        args = ("--model=openai/gpt-4o-mini", f"--api-base={server.url}", *_common(tmp_path))
        first = run_suite(tmp_path / "run", *args)
        again = run_suite(tmp_path / "run", *args)  # answered from the cache: still redacted, still said
    assert {r.authorization for r in server.requests()} == {f"Bearer {key}"}, "the key was in use"
    assert len(server.requests()) == 3, "the rerun was answered from the cache"
    for run in (first, again):
        _assert_redacted_everywhere(run, tmp_path / "run", key, "<OPENAI_API_KEY>")


def test_a_model_config_key_echoed_by_the_router_s_server_is_taken_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _echo_key(monkeypatch, variable=None)  # only in the config file, under no secret-looking name
    with EchoServer().running() as server:
        config = tmp_path / "router.yaml"
        config.write_text(
            "model_list:\n  - model_name: echo\n    litellm_params:\n      model: openai/echo\n"
            f"      api_base: {server.url}\n      api_key: {key}\n"
        )
        run = run_suite(tmp_path / "run", "--model=echo", f"--model-config={config}", *_common(tmp_path))
    assert {r.authorization for r in server.requests()} == {f"Bearer {key}"}
    _assert_redacted_everywhere(run, tmp_path / "run", key, "<model_list[0].litellm_params.api_key>")


def test_a_key_echoed_into_batched_completions_is_taken_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = _echo_key(monkeypatch)
    with EchoServer(models=LISTED).running() as server:
        run = run_suite(
            tmp_path / "run",
            "--model=openai/tiny",
            f"--api-base={server.url}",
            "--api-batching=completions",
            *_common(tmp_path),
        )
    assert {r.authorization for r in server.requests()} == {f"Bearer {key}"}
    _assert_redacted_everywhere(run, tmp_path / "run", key, "<OPENAI_API_KEY>")


def test_a_key_echoed_into_a_provider_batch_s_answers_is_taken_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _echo_key(monkeypatch)
    server = EchoBatchServer()
    with server.running():
        args = ("--model=openai/gpt-4o-mini", f"--api-base={server.url}", "--batch", "--batch-poll=0.2")
        run = run_suite(tmp_path / "run", *args, *_common(tmp_path))
    assert server.created and server.chat_requests() == 0, "answered by batch"
    _assert_redacted_everywhere(run, tmp_path / "run", key, "<OPENAI_API_KEY>")
