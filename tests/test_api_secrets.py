"""A key planted in OPENAI_API_KEY is used for requests and appears in nothing the run writes or prints."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from helpers.fault_server import OK, Fault, FaultServer
from helpers.suite_runner import run_suite


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
