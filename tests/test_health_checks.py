"""How much a server's health checks cost while its requests are in flight (backends/liveness.py).

A long request makes the client check the server directly (GET /health) every CHECK_SECONDS. That check
must stay cheap beside the model it watches: once per server per period, however many requests are in
flight, and without building a TLS context per check (loading the CA bundle costs about 90 ms of CPU,
which on a small machine is taken from the engine being measured).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import REPO

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.chat import api
from mathcomp_tests.backends.completions import servers
from mathcomp_tests.backends.liveness import CHECK_SECONDS, Ping
from mathcomp_tests.data import scenarios, stratified
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"


def _listed() -> list[dict[str, object]]:
    return [
        {"id": "tiny", "object": "model", "owned_by": "vllm", "root": str(TOKENIZER), "max_model_len": 1024}
    ]


def test_requests_in_flight_share_one_health_check_per_server_and_period(tmp_path: Path) -> None:
    pair = [FaultServer(models=_listed(), latency=3.0, gather=4) for _ in range(2)]  # 4 in flight on each
    rows = stratified.draw(scenarios.load(REPO / "fixtures" / "scenarios.csv"), 32)
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    prompts = [prompt_sets.build(s, Condition("neutral", "end"), prompt_set, names) for s in rows]
    with pair[0].running(), pair[1].running():
        config = tmp_path / "servers.yaml"
        config.write_text(
            "model_list:\n"
            + "".join(
                f"  - model_name: tiny\n    litellm_params:\n      model: openai/tiny\n      api_base: {s.url}\n"
                for s in pair
            )
        )
        backend = create(
            models.resolve("tiny", config=config),
            BackendOptions(model_config=config, api_batching="completions", batch_size=4),
        )
        before, started = [s.health_checks for s in pair], time.monotonic()
        answers = backend.complete(prompts, Decoding(4))  # 8 requests held 3 s, 4 in flight per server
        took = time.monotonic() - started
        checks = [s.health_checks - b for s, b in zip(pair, before, strict=True)]
        backend.close()
    assert all(a.error is None for a in answers)
    assert [len(s.requests()) for s in pair] == [4, 4] and [s.most_open for s in pair] == [4, 4]
    # Silent for 1 s, then one check every CHECK_SECONDS: about 4 in 3 s. Each of the 4 requests in
    # flight checking for itself made about 16.
    assert all(1 <= n <= (took - 1) / CHECK_SECONDS + 2 for n in checks), checks


async def _checks(ping: Ping, n: int) -> list[str | None]:
    return [await ping() for _ in range(n)]


@pytest.mark.parametrize("check", ["pool server", "deployments"])
def test_health_checks_build_no_tls_context_of_their_own(check: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server = FaultServer(models=_listed())
    loads: list[Any] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        real(self, *args, **kwargs)

    with server.running():
        root = server.url.removesuffix("/v1")
        ping = servers.pinger(root) if check == "pool server" else api._pinger([server.url])
        assert asyncio.run(_checks(ping, 1)) == [None]  # the first may build the process's one context
        monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
        assert asyncio.run(_checks(ping, 5)) == [None] * 5
    assert loads == [], f"{len(loads)} CA bundle loads for 5 health checks"


def test_a_health_check_still_fails_on_a_server_that_is_gone(tmp_path: Path) -> None:
    server = FaultServer(models=_listed())
    with server.running():
        root = server.url.removesuffix("/v1")
    (failure,) = asyncio.run(_checks(servers.pinger(root), 1))
    assert failure is not None and failure.startswith(f"GET {root}/health: ConnectError"), failure
