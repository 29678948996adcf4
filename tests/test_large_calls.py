"""A large call on the batched /v1/completions path is rendered and sent in pieces
(backends/completions/backend.py): its first requests do not wait for its last prompt to be rendered, and a
server gone ends the call once, not once a piece."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from helpers.fault_server import FaultServer
from helpers.spies import count_calls
from helpers.suite_runner import REPO

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.base import ServerGoneError
from mathcomp_tests.backends.completions.backend import PIECE
from mathcomp_tests.backends.liveness import Liveness
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


def _held_until(condition: Callable[[], bool], what: str) -> None:
    """Return once ``condition`` holds (the render that calls it waits there)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"  # hang guard
        time.sleep(0.01)


def _settled(backend: Any) -> bool:
    """Whether the backend's loop has nothing under way: the pieces that failed have ended, as the caller's
    thread sees before it renders the next piece (``LoopThread.run_each``)."""

    async def idle() -> bool:
        return all(task is asyncio.current_task() for task in asyncio.all_tasks())

    return bool(asyncio.run_coroutine_threadsafe(idle(), backend._loop.loop).result())


def test_a_large_call_sends_its_first_requests_before_its_last_prompt_is_rendered() -> None:
    server = FaultServer(models=_listed())
    prompts = _prompts(1000)
    rendered: list[Prompt] = []
    with server.running():
        backend = _backend(server)
        real = backend.render

        def held(prompt: Prompt) -> str:
            if len(rendered) == len(prompts) - 1:  # the last prompt waits for the first request to arrive
                _held_until(lambda: bool(server.requests()), "a request reached the server before the last prompt")
            rendered.append(prompt)
            return str(real(prompt))

        backend.render = held
        answers = backend.complete(prompts, Decoding(4))
        backend.close()
    assert all(a.error is None and a.text == "more" for a in answers)
    assert len(rendered) == len(prompts)
    assert sum(r.prompts for r in server.answered()) == len(prompts)


def test_a_large_call_to_a_server_that_is_gone_fails_once_not_once_a_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FaultServer(models=_listed())
    with server.running():
        backend: Any = create(
            models.resolve("openai/tiny"),
            BackendOptions(api_base=server.url, api_batching="completions", max_connection_failures=2),
        )
    failures = count_calls(monkeypatch, Liveness, "failed")
    with pytest.raises(ServerGoneError):
        backend.complete(_prompts(40), Decoding(4))
    one = len(failures)
    real, raised = backend.render, count_calls(monkeypatch, Liveness, "error")
    rendered: list[Prompt] = []

    def held(prompt: Prompt) -> str:
        if len(rendered) == 2 * PIECE:  # the third piece waits until the first ones have failed and ended
            _held_until(lambda: bool(raised) and _settled(backend), "the server was found gone")
        rendered.append(prompt)
        return str(real(prompt))

    backend.render = held
    failures.clear()
    with pytest.raises(ServerGoneError) as gone:
        backend.complete(_prompts(1200), Decoding(4))
    backend.close()
    assert "stopped answering" in str(gone.value)
    assert len(rendered) < 1200, "no piece is rendered once the call failed"
    assert len(failures) <= 2 * one, f"{len(failures)} connection failures, {one} for one small call"
