"""Several servers of one model on the batched /v1/completions path (--api-batching=completions with a
--model-config group), against real local servers we control (tests/helpers/fault_server.py).

The work goes by free capacity: a server that finishes a request takes the next. A server that goes away
hands its prompts to the others; the run stops only when none is left. Answers and cache keys are the
same whichever server answered, and the same as one server's.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from helpers.fault_server import FaultServer
from helpers.spies import count_calls
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.base import BackendError, ServerGoneError, ServerLeftWarning
from mathcomp_tests.backends.cache.store import CachedBackend, ResponseCache
from mathcomp_tests.backends.liveness import Liveness
from mathcomp_tests.data import scenarios, stratified
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Prompt

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"
"""Only its tokenizer and chat template are read here."""
DECODING = Decoding(8)


def _listed(root: Path = TOKENIZER, name: str = "tiny") -> list[dict[str, object]]:
    return [{"id": name, "object": "model", "owned_by": "vllm", "root": str(root), "max_model_len": 1024}]


def _prompts(n: int) -> list[Prompt]:
    rows = stratified.draw(scenarios.load(REPO / "fixtures" / "scenarios.csv"), n)
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    return [prompt_sets.build(s, Condition("neutral", "end"), prompt_set, names) for s in rows]


def _config(tmp_path: Path, servers: list[FaultServer], limits: list[int | None] | None = None) -> Path:
    """A litellm Router config: group `tiny`, one OpenAI-compatible deployment per server."""
    lines = ["model_list:"]
    for n, server in enumerate(servers):
        lines += ["  - model_name: tiny", "    litellm_params:", "      model: openai/tiny"]
        lines.append(f"      api_base: {server.url}")
        if limits and limits[n] is not None:
            lines.append(f"      max_parallel_requests: {limits[n]}")
    path = tmp_path / "servers.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _pool(config: Path, **options: Any) -> Any:
    spec = models.resolve("tiny", config=config)
    return create(spec, BackendOptions(model_config=config, api_batching="completions", **options))


def _one(url: str, **options: Any) -> Any:
    return create(
        models.resolve("openai/tiny"), BackendOptions(api_base=url, api_batching="completions", **options)
    )


def _running_then_stopped(servers: list[FaultServer], victim: int) -> tuple[list[ExitStack], threading.Thread]:
    """Every server running (each closed by its stack), and a thread, started, that stops ``servers[victim]``
    once it has received two requests (it stops listening; what it holds is answered first)."""
    stacks = [ExitStack() for _ in servers]
    for stack, server in zip(stacks, servers, strict=True):
        stack.enter_context(server.running())

    def stop_after_two_requests() -> None:
        deadline = time.monotonic() + 120
        while len(servers[victim].requests()) < 2 and time.monotonic() < deadline:  # hang guard
            time.sleep(0.01)
        stacks[victim].close()

    stopper = threading.Thread(target=stop_after_two_requests)
    stopper.start()
    return stacks, stopper


def _prompts_sent(server: FaultServer) -> int:
    return sum(r.prompts for r in server.answered())


def test_prompts_spread_over_three_servers_are_answered_and_cached_as_one_servers(tmp_path: Path) -> None:
    servers = [FaultServer(models=_listed(), latency=0.05) for _ in range(3)]
    prompts = _prompts(96)
    with ExitStack() as stack:
        for server in servers:
            stack.enter_context(server.running())
        one = _one(servers[0].url, batch_size=8)
        alone = one.complete(prompts, DECODING)
        one_identity = one.cache_identity()
        one.close()
        marks = [len(s.requests()) for s in servers]

        pool = _pool(_config(tmp_path, servers), batch_size=8)
        answers = pool.complete(prompts, DECODING)
        assert pool.cache_identity() == one_identity, "the cache key does not depend on the servers"
        pool.close()
        sent = [sum(r.prompts for r in s.requests(m)) for s, m in zip(servers, marks, strict=True)]

        cache = tmp_path / "responses.sqlite"
        first = CachedBackend(_pool(_config(tmp_path, servers), batch_size=8), ResponseCache(cache))
        cached_answers = first.complete(prompts, DECODING)
        first.close()
        before = sum(len(s.requests()) for s in servers)
        again = CachedBackend(_one(servers[1].url, batch_size=8), ResponseCache(cache))
        reread = again.complete(prompts, DECODING)
        again.close()
        after = sum(len(s.requests()) for s in servers)

    assert all(n > 0 for n in sent) and sum(sent) == len(prompts), sent
    assert [a.text for a in answers] == [a.text for a in alone] and {a.text for a in answers} == {"more"}
    assert all(a.error is None for a in answers)
    assert first.calls == len(prompts) and again.calls == 0 and after == before, (
        "one cache entry per prompt: what several servers answered, one server's run reads back"
    )
    assert [a.text for a in reread] == [a.text for a in cached_answers]


def test_a_slower_server_gets_fewer_prompts(tmp_path: Path) -> None:
    fast, slow = FaultServer(models=_listed(), latency=0.02), FaultServer(models=_listed(), latency=0.4)
    with fast.running(), slow.running():
        pool = _pool(_config(tmp_path, [fast, slow]), batch_size=4, max_concurrency=2)
        answers = pool.complete(_prompts(160), DECODING)
        pool.close()
    assert all(a.error is None for a in answers)
    assert _prompts_sent(fast) + _prompts_sent(slow) == 160
    assert 0 < _prompts_sent(slow) < _prompts_sent(fast) / 2, (_prompts_sent(fast), _prompts_sent(slow))


def test_a_servers_own_limit_on_requests_in_flight_holds(tmp_path: Path) -> None:
    servers = [FaultServer(models=_listed(), latency=0.1) for _ in range(2)]
    with servers[0].running(), servers[1].running():
        pool = _pool(_config(tmp_path, servers, [1, 3]), batch_size=4)
        pool.complete(_prompts(96), DECODING)
        pool.close()

    def most_at_once(server: FaultServer) -> int:
        log = server.requests()
        return max(sum(o.start <= r.start < o.end for o in log) for r in log)

    assert most_at_once(servers[0]) == 1 and 1 < most_at_once(servers[1]) <= 3


def test_a_server_stopped_mid_run_hands_its_prompts_to_the_others_and_says_so(tmp_path: Path) -> None:
    servers = [FaultServer(models=_listed(), latency=0.15) for _ in range(3)]
    stacks, stopper = _running_then_stopped(servers, 1)
    victim = servers[1]
    pool = _pool(_config(tmp_path, servers), batch_size=4, max_connection_failures=4)
    try:
        with pytest.warns(ServerLeftWarning) as said:
            answers = pool.complete(_prompts(200), DECODING)
        stopper.join()
        later = pool.complete(_prompts(200)[:20], Decoding(4))  # the next case: the server is left out
        pool.close()
    finally:
        stacks[0].close()
        stacks[2].close()
    assert all(a.error is None and a.text == "more" for a in answers), {a.error for a in answers}
    assert all(a.error is None for a in later)
    assert sum(_prompts_sent(s) for s in servers) >= 220
    lines = [str(w.message) for w in said]
    assert len(lines) == 1 and f"the model server at {victim.url.removesuffix('/v1')} went away" in lines[0]
    assert servers[0].url.removesuffix("/v1") in lines[0], lines[0]


def test_every_server_gone_stops_the_run_with_one_error_naming_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    servers = [FaultServer(models=_listed()) for _ in range(2)]
    with servers[0].running(), servers[1].running():
        pool = _pool(_config(tmp_path, servers), batch_size=4, max_concurrency=4, max_connection_failures=4)
    failures = count_calls(monkeypatch, Liveness, "failed")  # both are down now
    with (
        pytest.warns(ServerLeftWarning),  # the first to go leaves one behind, for a moment
        pytest.raises(ServerGoneError, match="every model server stopped answering") as raised,
    ):
        pool.complete(_prompts(40), DECODING)
    pool.close()
    # Each server goes once its 4 failures are counted, the requests it had in flight failing with it: not a
    # round of failures for each of the 10 requests.
    assert len(failures) <= 2 * (4 + 4), f"{len(failures)} connection failures"
    assert all(s.url.removesuffix("/v1") in str(raised.value) for s in servers), raised.value
    assert "a rerun asks only for the rest" in str(raised.value)


def test_a_server_of_another_model_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    right = FaultServer(models=_listed())
    wrong = FaultServer(models=_listed(name="other", root=Path("/models/other")))
    copy = FaultServer(models=[{**_listed()[0], "max_model_len": 4096}])
    with right.running(), wrong.running(), copy.running():
        with pytest.raises(
            BackendError,
            match=f"the server at {wrong.url.removesuffix('/v1')} does not serve tiny; it serves: /models/other",
        ):
            _pool(_config(tmp_path, [right, wrong]))
        with pytest.raises(
            BackendError, match=f"server at {copy.url.removesuffix('/v1')} serves another: max_model_len 4096"
        ):
            _pool(_config(tmp_path, [right, copy]))


def test_a_deployment_that_is_no_openai_compatible_server_is_named(tmp_path: Path) -> None:
    config = tmp_path / "servers.yaml"
    config.write_text(
        "model_list:\n  - model_name: tiny\n    litellm_params:\n      model: anthropic/claude\n"
    )
    with pytest.raises(
        BackendError, match=r"deployment 1 of tiny \(anthropic/claude\) is no OpenAI-compatible"
    ):
        _pool(config)


def test_the_suite_over_two_servers_completes_and_a_rerun_reads_the_cache(tmp_path: Path) -> None:
    servers = [FaultServer(models=_listed(), latency=0.02) for _ in range(2)]
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    with servers[0].running(), servers[1].running():
        args = (
            "--model=tiny",
            f"--model-config={_config(tmp_path, servers)}",
            "--api-batching=completions",
            "--limit=40",
            "--framings=neutral,direct-more",
            "--positions=end",
            "--batch-size=8",
            f"--thresholds={thresholds}",
        )
        first = run_suite(tmp_path, *args)
        marks = [len(s.requests()) for s in servers]
        second = run_suite(tmp_path, *args)
    assert first.returncode == 0, first.output
    assert all(m > 0 for m in marks) and sum(_prompts_sent(s) for s in servers) == 80
    assert all(r["status"] == "ok" and r["label"] == "more" for r in first.records)
    assert second.returncode == 0 and second.summary["prompts_sent"] == 0, second.output
    assert [len(s.requests()) for s in servers] == marks


def test_a_server_that_left_a_suite_run_is_an_end_of_run_note_and_in_the_summary(tmp_path: Path) -> None:
    servers = [FaultServer(models=_listed(), latency=0.1) for _ in range(2)]
    stacks, stopper = _running_then_stopped(servers, 1)
    victim = servers[1]
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    try:
        run = run_suite(
            tmp_path,
            "--model=tiny",
            f"--model-config={_config(tmp_path, servers)}",
            "--api-batching=completions",
            "--limit=60",
            "--framings=neutral,direct-more,direct-less",
            "--positions=end",
            "--batch-size=4",
            "--max-connection-failures=2",
            f"--thresholds={thresholds}",
        )
        stopper.join()
    finally:
        stacks[0].close()
        stacks[1].close()
    gone = victim.url.removesuffix("/v1")
    assert run.returncode == 0, run.output
    assert [r["status"] for r in run.records] == ["ok"] * 180
    (left,) = run.summary["servers_left"]
    assert left.startswith(f"the model server at {gone} went away") and servers[0].url.removesuffix("/v1") in left
    tail = run.output[run.output.index("MathComp directional error") :]  # the table and the notes under it
    assert f"MathComp: the model server at {gone} went away" in tail, tail
