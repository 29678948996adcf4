"""A large call on the batched /v1/completions path is rendered and sent in pieces
(backends/http/completions.py): its first requests do not wait for its last prompt to be rendered, and a
server gone ends the call once, not once a piece."""

from __future__ import annotations

import time
from typing import Any

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import REPO

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.base import ServerGoneError
from mathcomp_tests.data import scenarios, stratified
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Prompt

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"


def _listed() -> list[dict[str, object]]:
    entry = {
        "id": "tiny",
        "object": "model",
        "owned_by": "vllm",
        "root": str(TOKENIZER),
        "max_model_len": 1024,
    }
    return [entry]


def _prompts(n: int) -> list[Prompt]:
    rows = scenarios.load(REPO / "fixtures" / "scenarios.csv")
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    framings = ("neutral", "direct-more", "direct-less", "indirect-more")
    return [
        prompt_sets.build(s, Condition(f, "end"), prompt_set, names)
        for f in framings
        for s in stratified.draw(rows, min(n, len(rows)))
    ][:n]


def _backend(server: FaultServer) -> Any:
    options = BackendOptions(api_base=server.url, api_batching="completions")
    return create(models.resolve("openai/tiny"), options)


def test_a_large_call_sends_its_first_requests_before_its_last_prompt_is_rendered() -> None:
    server = FaultServer(models=_listed())
    prompts = _prompts(1000)
    rendered: list[float] = []
    with server.running():
        backend = _backend(server)
        real = backend.render

        def slow(prompt: Prompt) -> str:
            time.sleep(0.003)  # 3 s for the call: a slow chat template
            rendered.append(time.time())
            return str(real(prompt))

        backend.render = slow
        answers = backend.complete(prompts, Decoding(4))
        backend.close()
    first = min(r.start for r in server.requests())
    assert all(a.error is None and a.text == "more" for a in answers)
    assert len(rendered) == len(prompts) and first < rendered[-1] - 1.0, (first, rendered[-1])
    assert sum(r.prompts for r in server.answered()) == len(prompts)


def test_a_large_call_to_a_server_that_is_gone_fails_once_not_once_a_piece() -> None:
    server = FaultServer(models=_listed())
    with server.running():
        backend: Any = create(
            models.resolve("openai/tiny"),
            BackendOptions(api_base=server.url, api_batching="completions", max_connection_failures=2),
        )
    started = time.monotonic()
    with pytest.raises(ServerGoneError):
        backend.complete(_prompts(40), Decoding(4))
    one = time.monotonic() - started
    real, rendered = backend.render, []

    def slow(prompt: Prompt) -> str:
        time.sleep(0.005)  # 6 s for 1,200 prompts: later pieces are rendered after the first one failed
        rendered.append(prompt)
        return str(real(prompt))

    backend.render = slow
    started = time.monotonic()
    with pytest.raises(ServerGoneError) as raised:
        backend.complete(_prompts(1200), Decoding(4))
    pieces = time.monotonic() - started
    backend.close()
    assert "stopped answering" in str(raised.value)
    assert len(rendered) < 1200 and pieces < one + 3, (len(rendered), one, pieces)
