"""Batched /v1/completions (--api-batching=completions) against a real local server we control.

The server (tests/helpers/fault_server.py) answers lists of prompts as vLLM does and misbehaves on a schedule;
the prompts are rendered by the demo model's own tokenizer (the server lists its directory as `root`).
The same path against a real vLLM is in test_vllm.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from helpers import warm_runs
from helpers.cache_rows import cached_rows
from helpers.fault_server import OK, Fault, FaultServer
from helpers.spies import count_calls
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.base import ServerGoneError
from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache
from mathcomp_tests.backends.liveness import Liveness
from mathcomp_tests.backends.local import tokens
from mathcomp_tests.data import scenarios, stratified
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Prompt

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"
"""Only its tokenizer and chat template are read here (any head size will do)."""


def _listed(root: Path = TOKENIZER) -> list[dict[str, object]]:
    return [{"id": "tiny", "object": "model", "owned_by": "vllm", "root": str(root), "max_model_len": 1024}]


def _prompts(n: int, framing: str = "neutral") -> list[Prompt]:
    rows = stratified.draw(scenarios.load(REPO / "fixtures" / "scenarios.csv"), n)  # as --limit=n draws
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    return [prompt_sets.build(s, Condition(framing, "end"), prompt_set, names) for s in rows]


def _backend(url: str, **options: object) -> object:
    spec = models.resolve("openai/tiny")
    return create(spec, BackendOptions(api_base=url, api_batching="completions", **options))  # type: ignore[arg-type]


def _thresholds(tmp_path: Path, error_rate: float = 0.0) -> Path:
    path = tmp_path / "thresholds.toml"
    path.write_text(f"[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = {error_rate}\n")
    return path


def test_many_prompts_per_request_rendered_by_the_models_own_template(tmp_path: Path) -> None:
    server = FaultServer(models=_listed(), latency=0.02)
    with server.running():
        args = (
            "--model=openai/tiny",
            f"--api-base={server.url}",
            "--api-batching=completions",
            "--limit=40",
            "--framings=neutral,direct-more",
            "--positions=end",
            "--batch-size=16",
            f"--thresholds={_thresholds(tmp_path)}",
        )
        first = run_suite(tmp_path, *args)
        mark = len(server.requests())
        second = run_suite(tmp_path, *args)
        log = server.requests()

    assert first.returncode == 0, first.output
    sent = log[:mark]
    assert sum(r.prompts for r in sent) == 80 and all(1 < r.prompts <= 16 for r in sent), [
        r.prompts for r in sent
    ]
    assert len(sent) <= 8, "80 prompts in requests of at most 16, not one request each"
    assert all(r["status"] == "ok" and r["label"] == "more" for r in first.records)
    assert {r["chat_template"] for r in first.records} == {"auto"}, "each answer says its prompt was templated"
    assert first.summary["chat_template"]["model"] == "auto"

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(TOKENIZER)
    expected = {
        tokens.render(tokenizer, p, True) for f in ("neutral", "direct-more") for p in _prompts(40, f)
    }
    received = {text for r in sent for text in r.prompt.split("\n<|user|>\n")}
    assert len(received) >= 1 and all(p.startswith("<|user|>\n") for p in expected)
    joined = "\n".join(r.prompt for r in sent)
    assert all(p in joined for p in expected), "each prompt went out exactly as the chat template renders it"

    assert second.returncode == 0, second.output
    assert second.summary["prompts_sent"] == 0 and len(log) == mark, "a rerun is answered from the cache"


def test_the_next_case_is_asked_while_the_one_before_is_answered(tmp_path: Path) -> None:
    """Cases run one after another; the engine should not wait between them. Each request here takes
    1.5 s and holds a whole case: the next case's request is sent while the current one is answered,
    and the answers are the same as when asked one case at a time (a rerun asks nothing). The latency is
    long beside the time a case takes to be scored and recorded, which on a machine busy with other tests
    once took 0.4 s: with 0.3 s of latency the case asked ahead was already answered when its turn came."""
    server = FaultServer(models=_listed(), latency=1.5)
    framings = ("neutral", "direct-more", "direct-less", "direct-equal")
    with server.running():
        args = (
            "--model=openai/tiny",
            f"--api-base={server.url}",
            "--api-batching=completions",
            "--limit=20",
            f"--framings={','.join(framings)}",
            "--positions=end",
            "--batch-size=20",
            "--max-concurrency=1",
            f"--thresholds={_thresholds(tmp_path)}",
        )
        first = run_suite(tmp_path, *args)
        log = server.requests()
        second = run_suite(tmp_path, *args)
        again = server.requests()[len(log) :]
    assert first.returncode == 0, first.output
    assert len(log) == len(framings) and all(r.prompts == 20 for r in log), [r.prompts for r in log]
    assert log[1].start < log[0].end, "the second case was sent while the first was being answered"
    overlapping = [b for a, b in zip(log, log[1:], strict=False) if b.start < a.end]
    # A case asked ahead may be answered before its turn comes (this server has room for both), and then
    # the one after it is sent when that turn comes: asked one at a time, no two requests would overlap.
    assert len(overlapping) >= (len(framings) - 1) // 2 + 1, [(r.start, r.end) for r in log]
    assert first.summary["prompts_sent"] == 80 and all(r["label"] == "more" for r in first.records)
    assert second.returncode == 0 and second.summary["prompts_sent"] == 0 and not again


def test_a_generic_tokenizer_loads_without_torch_and_a_models_own_goes_to_autotokenizer(tmp_path: Path) -> None:
    """Rendering prompts for a server needs the tokenizer, not torch (seconds of every run's start)."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "tokenizer_config.json").write_text('{"tokenizer_class": "Qwen2Tokenizer"}')
    assert tokens.generic_tokenizer(str(TOKENIZER))
    assert not tokens.generic_tokenizer(str(own)) and not tokens.generic_tokenizer("Qwen/Qwen2.5-3B-Instruct")
    server = FaultServer(models=_listed())
    with server.running():
        code = (
            "import sys\n"
            "from mathcomp_tests.backends import create, models\n"
            "from mathcomp_tests.settings import BackendOptions\n"
            f"b = create(models.resolve('openai/tiny'), BackendOptions(api_base={server.url!r}, "
            "api_batching='completions'))\n"
            "print(type(b.tokenizer).__name__, 'torch' in sys.modules)\n"
            "b.close()\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "False", "torch was imported to render prompts"


def schedule_faults(index: int, attempt: int) -> Fault:
    """Prompt 0: a 500 once; prompt 20: a 429 once (Retry-After 1); prompt 13: refused always (too long)."""
    if index == 0 and attempt == 0:
        return Fault("server-error")
    if index == 20 and attempt == 0:
        return Fault("rate-limit", retry_after=1)
    if index == 13:
        return Fault("bad-request", text="This model's maximum context length is 1024 tokens")
    return OK


def test_retries_backoff_and_one_refused_prompt_does_not_sink_its_batch(tmp_path: Path) -> None:
    server = FaultServer(schedule=schedule_faults, models=_listed())
    cache = ResponseCache(tmp_path / "responses.sqlite")
    prompts = _prompts(32)
    with server.running():
        backend = CachedBackend(_backend(server.url, batch_size=8, max_concurrency=2, num_retries=2), cache)  # type: ignore[arg-type]
        arrived: list[int] = []
        responses = backend.complete(prompts, Decoding(8), lambda i, r: arrived.append(i))
        backend.close()
    errors = {i: r.error for i, r in enumerate(responses) if r.error}
    refused = [r for r in server.requests() if r.fault == "bad-request"]
    assert refused, "the server refused a batch"
    bad = next(i for i, p in enumerate(prompts) if p.text in refused[-1].prompt)
    assert list(errors) == [bad] and "maximum context length" in str(errors[bad])
    assert all(r.text == "more" for i, r in enumerate(responses) if i != bad)
    assert sorted(arrived) == list(range(32)), "every prompt handed on once, answered or failed"
    assert cached_rows(tmp_path / "responses.sqlite") == 31, "every answer stored, the refused prompt not"
    limited = next(r for r in server.requests() if r.fault == "rate-limit")
    again = next(r for r in server.requests() if r.start > limited.start and limited.prompt in r.prompt)
    assert again.start - limited.end >= 1.0, "Retry-After was honoured"
    assert len(server.requests()) < 16, "the refused prompt was found in halves, not one request each"


def test_a_server_that_is_gone_ends_the_batch_at_once_with_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FaultServer(models=_listed())
    with server.running():
        backend = _backend(server.url, batch_size=4, max_concurrency=2, max_connection_failures=6)
    failures = count_calls(monkeypatch, Liveness, "failed")
    # The server is down now: the same backend against a closed port.
    with pytest.raises(ServerGoneError, match=r"at http://127\.0\.0\.1:\d+ stopped answering \(6 connection"):
        backend.complete(_prompts(120), Decoding(8))  # type: ignore[attr-defined]
    backend.close()  # type: ignore[attr-defined]
    # Once six attempts failed the batch ends: not a round of failures for each of its 30 requests.
    assert 6 <= len(failures) <= 6 + 2, failures


def _prompts_answered(server: FaultServer, batching: str) -> int:
    """Distinct prompts answered: a chat request retried after its reply was lost is answered twice and
    stored once (a batched request holds several prompts, each sent once)."""
    answered = server.answered()
    return len({r.index for r in answered}) if batching == "chat" else sum(r.prompts for r in answered)


@pytest.mark.parametrize("batching", ["chat", "completions"])
def test_a_server_stopped_mid_run_stops_the_run_with_one_error_and_nothing_answered_is_lost(
    tmp_path: Path, batching: str
) -> None:
    """The Router path and the batched path alike: the server goes away while the suite runs."""
    server = FaultServer(models=_listed(), latency=0.2)
    args = [
        "--model=openai/tiny",
        "--api-base=(set below)",
        f"--api-batching={batching}",
        "--framings=neutral,direct-more,direct-less",
        "--positions=end",
        "--limit=60",
        "--max-concurrency=2",
        "--batch-size=4",
        f"--thresholds={_thresholds(tmp_path, 1.0)}",
    ]
    cache = tmp_path / "cache" / "responses.sqlite"
    log = tmp_path / "run.log"
    with ExitStack() as stack:
        stack.enter_context(server.running())
        args[1] = f"--api-base={server.url}"
        command = [
            warm_runs.python(),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--reports-dir={tmp_path / 'reports'}",
        ]
        command += [f"--cache-dir={tmp_path / 'cache'}", *args]
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy()
            )
        try:
            deadline = time.monotonic() + 120
            while cached_rows(cache) < 8:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "nothing was answered"  # hang guard
                time.sleep(0.05)
            stack.close()  # stops listening; requests in flight are answered first
            proc.wait(120)  # hang guard: the old code went on case after case
        finally:
            if proc.poll() is None:
                proc.kill()
    output = log.read_text()
    assert proc.returncode == 2, output  # the session was interrupted, not run case after case
    assert "Interrupted: the model server at" in output and "stopped answering" in output
    assert output.strip().splitlines()[-1].count("1 error"), output.strip().splitlines()[-1]
    answered = _prompts_answered(server, batching)
    assert 0 < answered == cached_rows(cache), "every answer received is in the cache"

    again = FaultServer(models=_listed(), port=server.port)
    with again.running():
        rerun = run_suite(tmp_path, *args)
    assert rerun.returncode == 0, rerun.output
    assert sum(r.prompts for r in again.requests()) == 3 * 60 - answered, "a rerun asks only for the rest"
