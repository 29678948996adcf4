"""The provider-neutral batch protocol (mathcomp_tests/backends/batch/protocol.py), checked the same way
against both providers' FAKES on 127.0.0.1 (tests/helpers/fake_batch_server.py, fake_anthropic_server.py)
and against FakeCo, a third, FAKE provider registered as a new provider is: its one module
(tests/helpers/fakeco_batches.py, served by fakeco_server.py) and one line of ``PROVIDERS``, added here with
monkeypatch. Every provider is made through ``PROVIDERS``: create, the states, the results, errored, expired
and cancelled requests, provider errors as the backend's error, a failed download said and tried again, the
provider's extras recorded, an unreadable batch record said in one line, an earlier version's record
resumed, a wait that runs out as its own error, and (for the two with a live path) each batch request the
request the live call sends and each reply read as the live path reads it. The runner works on a real
sqlite response cache and real batch records in a temporary folder."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers.fake_anthropic_server import AnthropicServer
from helpers.fake_batch_server import BatchServer
from helpers.fakeco_batches import REGISTRY_LINE
from helpers.fakeco_server import FakeCoServer
from helpers.fault_server import OK, Fault

from mathcomp_tests.backends.base import BackendError, ServerGoneError
from mathcomp_tests.backends.batch import PROVIDERS, provider
from mathcomp_tests.backends.batch.pricing import Pricing
from mathcomp_tests.backends.batch.protocol import (
    BatchAPI,
    BatchReadError,
    BatchRequest,
    BatchStatus,
    BatchWaitError,
    SubmissionError,
    Unsendable,
)
from mathcomp_tests.backends.batch.runner import Runner
from mathcomp_tests.backends.batch.submissions import Submissions
from mathcomp_tests.backends.cache.store import ResponseCache, Row
from mathcomp_tests.backends.chat.api import APIBackend
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Message, Prompt, Response, Scenario

T = TypeVar("T")
KEY = "sk-test-contract-0f1e2d3c4b"
MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "fakeco": "gpt-4o-mini"}
"""The model each provider's contract asks (FakeCo hosts an OpenAI model: litellm prices it)."""
SERVERS = {"openai": BatchServer, "anthropic": AnthropicServer, "fakeco": FakeCoServer}
EXTRAS = {"openai": {"input_file_id"}, "anthropic": set(), "fakeco": {"receipt"}}
"""What each provider keeps of a batch beside its id (OpenAI: the input file; Anthropic's travel inline)."""
WITH_LIVE = pytest.mark.parametrize("side", ["openai", "anthropic"], indirect=True)
"""The providers whose models litellm also asks live (FakeCo has no live path)."""
GREEDY = Decoding(max_new_tokens=8)


def _prompt(n: int) -> Prompt:
    scenario = Scenario(str(n), "a", "b", "1", "2", Fraction(1), Fraction(2), "more", "c", "q", "t", False)
    messages = (Message("system", "Answer in one word."), Message("user", f"Question {n}: more, less or equal?"))
    return Prompt(scenario, Condition("neutral", "end"), messages, "hf")


def _requests(count: int, decoding: Decoding = GREEDY) -> list[BatchRequest]:
    return [BatchRequest(f"{n:064x}", _prompt(n), decoding) for n in range(count)]


@dataclass
class Side:
    """One provider: its fake, its batch API object, and its own way to cancel from outside."""

    name: str
    server: BatchServer | AnthropicServer
    loop: asyncio.AbstractEventLoop
    said: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        """The server as the provider (and the live path) takes it."""
        if isinstance(self.server, (AnthropicServer, FakeCoServer)):
            return self.server.base
        return self.server.url

    def api(self, model: str = "") -> BatchAPI:
        """The provider's BatchAPI, made as the batch backend makes it: through ``PROVIDERS``."""
        import litellm

        return provider(self.name)(litellm, model or MODELS[self.name], self.base, KEY)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(work)

    def held(self, batch_id: str) -> list[str]:
        """The custom ids the fake holds for a batch."""
        if isinstance(self.server, AnthropicServer):
            return [r["custom_id"] for r in self.server.batches[batch_id].requests]
        data = self.server.files[self.server.batches[batch_id].input_file_id]
        return [json.loads(line)["custom_id"] for line in data.splitlines() if line.strip()]

    def cancel(self, batch_id: str) -> None:
        """As from the provider's console."""
        if isinstance(self.server, AnthropicServer):
            url = f"{self.server.base}/v1/messages/batches/{batch_id}/cancel"
            headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        elif isinstance(self.server, FakeCoServer):
            url, headers = f"{self.server.base}/fakeco/jobs/{batch_id}/stop", {"fakeco-key": KEY}
        else:
            url, headers = f"{self.server.url}/batches/{batch_id}/cancel", {}
        request = urllib.request.Request(url, method="POST", data=b"", headers=headers)
        urllib.request.urlopen(request, timeout=10).close()

    def runner(self, api: BatchAPI, folder: Path, *, wait: float | None = None) -> tuple[Runner, ResponseCache]:
        cache = ResponseCache(folder / "responses.sqlite")

        def store(answers: list[tuple[str, Response]]) -> None:
            cache.put_many([Row(k, "m", "", r, 0.0) for k, r in answers])

        price = Pricing(__import__("litellm"), MODELS[self.name])
        runner = Runner(
            api, Submissions(folder), "m@fake", price, store,
            wait=wait, poll=0.05, rounds=2, resend_failed=True, say=self.said.append,
        )
        return runner, cache


@pytest.fixture(params=["openai", "anthropic", "fakeco"])
def side(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Side]:
    if request.param == "fakeco":
        monkeypatch.setitem(PROVIDERS, *REGISTRY_LINE)  # the one line that registers a new provider
    server = SERVERS[request.param]()
    loop = asyncio.new_event_loop()
    with server.running():
        yield Side(request.param, server, loop)
    loop.close()


def _finished(side: Side, api: BatchAPI, batch_id: str) -> Any:
    for _ in range(50):
        state = side.run(api.retrieve(batch_id))
        if state.done:
            return state
    raise AssertionError(f"batch {batch_id} never ended")


def test_create_holds_each_request_under_its_key_and_the_batch_runs(side: Side) -> None:
    side.server.delay = 600
    api, requests = side.api(), _requests(3)
    created = side.run(api.create(requests))
    state = side.run(api.retrieve(created.state.id))
    side.run(api.close())
    assert created.state.status is BatchStatus.RUNNING and state.status is BatchStatus.RUNNING and not state.done
    assert sorted(side.held(state.id)) == sorted(r.key for r in requests)
    assert state.line() == f"batch {state.id}: running, 0 of {state.total} answered, 0 failed"
    assert set(created.extras) == EXTRAS[side.name] and all(created.extras.values()), created.extras


def test_a_finished_batch_is_completed_and_its_results_are_the_answers(side: Side) -> None:
    api, requests = side.api(), _requests(3)
    state = _finished(side, api, side.run(api.create(requests)).state.id)
    got = side.run(api.results(state, Pricing(__import__("litellm"), MODELS[side.name])))
    side.run(api.close())
    assert state.status is BatchStatus.COMPLETED and (state.total, state.completed, state.failed) == (3, 3, 0)
    assert sorted(r.key for r in got.found) == sorted(r.key for r in requests) and got.unreadable == []
    for result in got.found:
        response = result.response
        assert response.error is None and response.text == "more" and response.input_tokens and response.output_tokens
        assert response.meta["finish_reason"] == "stop" and response.meta["batch"] == state.id
        assert response.meta["served_model"] == MODELS[side.name]
        live = response.meta["live_cost"]
        assert isinstance(live, float) and response.meta["cost"] == pytest.approx(live / 2), "half the live price"


def test_errored_requests_are_failed_results_never_answers(side: Side) -> None:
    side.server.schedule = lambda index, attempt: Fault("server-error", text="overloaded") if index == 0 else OK
    api = side.api()
    state = _finished(side, api, side.run(api.create(_requests(3))).state.id)
    got = side.run(api.results(state, Pricing(__import__("litellm"), MODELS[side.name])))
    side.run(api.close())
    failed = [r.response for r in got.found if r.response.error]
    assert state.failed == 1 and len(got.found) == 3 and len(failed) == 1
    assert failed[0].text == "" and f"batch {state.id}" in str(failed[0].error) and "overloaded" in str(failed[0].error)


def test_an_expired_batch_answers_part_and_fails_the_rest(side: Side) -> None:
    side.server.outcome = lambda number: "expired"
    api = side.api()
    state = _finished(side, api, side.run(api.create(_requests(4))).state.id)
    got = side.run(api.results(state, Pricing(__import__("litellm"), MODELS[side.name])))
    side.run(api.close())
    assert state.status is BatchStatus.EXPIRED
    assert len([r for r in got.found if r.response.error is None]) == 2
    assert all("expired" in str(r.response.error) for r in got.found if r.response.error is not None)


def test_a_batch_cancelled_from_outside_is_cancelled_with_nothing_answered(side: Side) -> None:
    side.server.delay = 600
    api = side.api()
    created = side.run(api.create(_requests(2)))
    side.cancel(created.state.id)
    state = _finished(side, api, created.state.id)
    got = side.run(api.results(state, Pricing(__import__("litellm"), MODELS[side.name])))
    side.run(api.close())
    assert state.status is BatchStatus.CANCELLED and [r for r in got.found if r.response.error is None] == []


def test_provider_errors_are_the_backend_s_error(side: Side) -> None:
    api = side.api()
    with pytest.raises(BackendError) as missing:
        side.run(api.retrieve("no-such-batch"))
    assert type(missing.value) is BackendError and "404" in str(missing.value)
    side.server.delay = 600
    state = side.run(api.create(_requests(1))).state
    side.server.download_faults = 1
    side.server.delay = 0
    finished = _finished(side, api, state.id)
    with pytest.raises(BackendError) as refused:
        side.run(api.results(finished, Pricing(__import__("litellm"), MODELS[side.name])))
    side.run(api.close())
    assert type(refused.value) is BackendError and "HTTP 500" in str(refused.value)


def test_a_failed_download_is_said_then_tried_again_and_one_that_stays_gone_stops_the_run(
    side: Side, tmp_path: Path
) -> None:
    side.server.download_faults = 1
    runner, cache = side.runner(side.api(), tmp_path)
    requests = {r.key: r for r in _requests(3)}
    outcome = side.run(runner.answer(requests))
    assert outcome.answered == set(requests) and len(cache.get_many(list(requests))) == 3
    (said,) = [line for line in side.said if "could not be read" in line]
    assert "try 1 of 3" in said and "HTTP 500" in said and "trying again at the next check" in said, side.said

    side.server.download_faults = 3
    runner, _ = side.runner(side.api(), tmp_path / "gone")
    with pytest.raises(BatchReadError, match=r"its results could not be read \(3 tries, last: .*HTTP 500") as gone:
        side.run(runner.answer({r.key: r for r in _requests(2)}))
    assert "\n" not in str(gone.value)
    (record,) = (tmp_path / "gone" / "batches").glob("*.json")
    assert not json.loads(record.read_text())["done"], "the batch stays recorded for the next run"
    side.run(runner.api.close())


def test_each_record_keeps_the_provider_s_extras_in_no_provider_s_word(side: Side, tmp_path: Path) -> None:
    """The record of a batch holds what the provider keeps of it (``Created.extras``) under `extras`; no
    provider's word (OpenAI's `input_file_id`) is a key of the record itself."""
    runner, _ = side.runner(side.api(), tmp_path)
    requests = {r.key: r for r in _requests(2)}
    assert side.run(runner.answer(requests)).answered == set(requests)
    side.run(runner.api.close())
    (path,) = (tmp_path / "batches").glob("*.json")
    record = json.loads(path.read_text())
    assert set(record) == {"id", "owner", "keys", "created", "done", "outcome", "unread_runs", "extras"}, record
    assert set(record["extras"]) == EXTRAS[side.name] and all(record["extras"].values()), record
    if isinstance(side.server, BatchServer) and side.name == "openai":
        assert record["extras"]["input_file_id"] == side.server.batches[record["id"]].input_file_id


@pytest.mark.parametrize("side", ["openai", "anthropic"], indirect=True)
def test_a_record_an_earlier_version_wrote_is_resumed(side: Side, tmp_path: Path) -> None:
    """Records written before `extras` (with `input_file_id`, "" for an Anthropic batch) still load: the
    run resumes their batch instead of paying for it again, and closes the record in today's form."""
    side.server.delay = 600
    api, requests = side.api(), _requests(3)
    created = side.run(api.create(requests))
    side.server.delay = 0
    old_file, path = created.extras.get("input_file_id", ""), tmp_path / "batches" / f"{created.state.id}.json"
    keys = [r.key for r in requests]
    path.parent.mkdir()
    path.write_text(json.dumps({"id": created.state.id, "input_file_id": old_file, "owner": "m@fake", "keys": keys,
                                "created": 1.0, "done": False, "outcome": "", "unread_runs": 0}))
    runner, cache = side.runner(api, tmp_path)
    outcome = side.run(runner.answer({r.key: r for r in requests}))
    side.run(api.close())
    assert outcome.resumed == [created.state.id] and outcome.created == [], side.said
    assert outcome.answered == set(keys) and len(cache.get_many(keys)) == 3
    assert side.server.created == [created.state.id], "no batch paid twice"
    closed = json.loads(path.read_text())
    assert closed["done"] and closed["extras"] == ({"input_file_id": old_file} if old_file else {}), closed
    assert "input_file_id" not in closed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "b1",\n"keys": [', "line 2: not JSON"),
        (b'{"id": "b1"}\n\xff', "line 2: not UTF-8 text"),
        ('{"id": "b1", "owner": "m@fake", "created": 1}', "line 1: no keys"),
        ('{"id": "b1", "input_file_id": "", "owner": "m", "keys": "k", "created": 1}', "line 1: keys is not a list"),
        ('{"id": "b1", "owner": "m", "keys": [], "created": 1, "extras": ["f"]}', "line 1: extras is not an object"),
        ('{"id": "b1", "input_file_id": 7, "owner": "m", "keys": [], "created": 1}', "line 1: input_file_id is not"),
        ("[1, 2]", "line 1: a JSON list, not an object"),
    ],
)
def test_an_unreadable_record_is_said_in_one_line_and_nothing_is_sent(
    side: Side, tmp_path: Path, text: str | bytes, expected: str
) -> None:
    record = tmp_path / "batches" / "b1.json"
    record.parent.mkdir()
    record.write_bytes(text if isinstance(text, bytes) else text.encode())
    runner, _ = side.runner(side.api(), tmp_path)
    with pytest.raises(SubmissionError) as unread:
        side.run(runner.answer({r.key: r for r in _requests(2)}))
    side.run(runner.api.close())
    said = str(unread.value)
    assert said.startswith(f"{record}: {expected}") and "expected a batch record" in said and "\n" not in said, said
    assert side.server.created == [] and record.read_bytes() == (text if isinstance(text, bytes) else text.encode())


def test_a_wait_that_runs_out_is_its_own_error_not_a_server_gone(side: Side, tmp_path: Path) -> None:
    side.server.delay = 600
    runner, _ = side.runner(side.api(), tmp_path, wait=0.2)
    with pytest.raises(BatchWaitError, match=r"--batch-wait=0.2s ran out with 1 batch\(es\) still running") as out:
        side.run(runner.answer({r.key: r for r in _requests(2)}))
    side.run(runner.api.close())
    assert not isinstance(out.value, ServerGoneError), "the provider answered every status check"
    assert len(side.server.created) == 1


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


LIVE = {"openai": ("gpt-4o-mini", "o3-mini"), "anthropic": ("claude-haiku-4-5",)}
"""The models whose live and batch requests are compared: o3-mini takes max_completion_tokens, no temperature."""


@WITH_LIVE
def test_the_batch_request_is_the_live_request(side: Side) -> None:
    """A sampled decoding (a seed: drop_params) through the live api backend and through the provider's
    create, on the same fake: the same body, model by model."""
    sampled = Decoding(max_new_tokens=8, temperature=0.7, seed=1)
    sent = side.server.message_bodies if isinstance(side.server, AnthropicServer) else side.server.chat_bodies
    for name in LIVE[side.name]:
        live = APIBackend(f"{side.name}/{name}", BackendOptions(api_base=side.base))
        answered = live.complete([_prompt(0)], sampled)
        live.close()
        api = side.api(name)
        side.run(api.create(_requests(1, sampled)))
        side.run(api.close())
        assert answered[0].error is None and sent[-1] == side.server.input_bodies()[-1], name
    assert len(sent) == len(LIVE[side.name])


def test_a_request_the_live_call_refuses_is_a_failed_request_not_a_batch(tmp_path: Path) -> None:
    """o3-mini takes no temperature 0: without a seed (no drop_params) litellm refuses the live call, and
    the batch refuses the same request in the same words."""
    server = BatchServer()
    loop = asyncio.new_event_loop()
    with server.running():
        side = Side("openai", server, loop)
        api = side.api("o3-mini")
        with pytest.raises(Unsendable, match="UnsupportedParamsError"):
            api.size(_requests(1)[0])
        runner, _ = side.runner(api, tmp_path)
        outcome = side.run(runner.answer({r.key: r for r in _requests(2)}))
        side.run(api.close())
    loop.close()
    assert server.created == [] and len(outcome.failed) == 2
    assert all("UnsupportedParamsError" in why for why in outcome.failed.values())
    assert any("2 request(s) cannot be sent" in line for line in side.said)


def test_a_batch_the_provider_failed_as_a_whole_says_why() -> None:
    """Only OpenAI fails a batch as a whole (its input did not validate)."""
    server = BatchServer(outcome=lambda number: "failed")
    loop = asyncio.new_event_loop()
    with server.running():
        side = Side("openai", server, loop)
        api = side.api()
        state = _finished(side, api, side.run(api.create(_requests(2))).state.id)
        side.run(api.close())
    loop.close()
    assert state.status is BatchStatus.FAILED
    assert "invalid_request: Model 'gpt-4o-mini' is not available" in state.errors


@WITH_LIVE
def test_each_reply_is_read_as_the_live_path_reads_it(side: Side) -> None:
    """The same reply through the live api backend and through a batch, on the same fake: one Response but
    for the batch's own meta (its id, its price). A reasoning model's `<think>` part is read as litellm reads
    it live (OpenAI's conversion takes it as reasoning, not the answer's text)."""
    side.server.answer = "<think>more or less?</think>more"
    live = APIBackend(f"{side.name}/{MODELS[side.name]}", BackendOptions(api_base=side.base))
    (answered,) = live.complete([_prompt(0)], GREEDY)
    live.close()
    api = side.api()
    state = _finished(side, api, side.run(api.create(_requests(1))).state.id)
    (result,) = side.run(api.results(state, Pricing(__import__("litellm"), MODELS[side.name]))).found
    side.run(api.close())
    batched, mine = result.response, ("batch", "cost", "live_cost")
    assert answered.error is None and batched.error is None and batched.text == answered.text
    assert (batched.input_tokens, batched.output_tokens) == (answered.input_tokens, answered.output_tokens)
    assert {k: v for k, v in batched.meta.items() if k not in mine} == {
        k: v for k, v in answered.meta.items() if k not in mine
    }
