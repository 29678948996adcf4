"""The suite against a server that rate-limits, fails, hangs and garbles on a schedule we control.

Every run must end with each item answered or recorded as an error, and a rerun must ask again only
for what has no answer yet.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from helpers.fault_server import OK, Fault, FaultServer
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends import create, models
from mathcomp_tests.backends.base import ServerGoneError
from mathcomp_tests.data import scenarios, stratified
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Response

RETRY_AFTER = 2
NUM_RETRIES = 1
PROMPTS = 12

# By the order in which the server first sees a prompt: what each attempt at it gets.
PLAN: dict[int, list[Fault]] = {
    0: [Fault("rate-limit", retry_after=RETRY_AFTER)],
    1: [Fault("server-error")],
    2: [Fault("hang", delay=3)],  # past the 1 s --request-timeout
    3: [Fault("malformed")],
    4: [Fault("empty")],
    5: [Fault("server-error", text="the model is overloaded")] * 50,
}


def scheduled(index: int, attempt: int) -> Fault:
    plan = PLAN.get(index, [])
    return plan[attempt] if attempt < len(plan) else OK


def permissive(tmp_path: Path) -> Path:
    """Ceilings that only the error rate can breach (the server answers `more` to everything)."""
    path = tmp_path / "thresholds.toml"
    path.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.02\n")
    return path


def test_faults_end_answered_or_recorded_and_a_rerun_asks_only_for_the_errors(tmp_path: Path) -> None:
    with FaultServer(schedule=scheduled, latency=0.05).running() as server:
        args = (
            "--model=openai/fault-server",
            f"--api-base={server.url}",
            f"--limit={PROMPTS}",
            "--framings=neutral",
            "--positions=end",
            "--max-concurrency=8",
            f"--num-retries={NUM_RETRIES}",
            "--request-timeout=1",
            "--max-error-rate=0.05",
            f"--thresholds={permissive(tmp_path)}",
        )
        first = run_suite(tmp_path, *args)
        mark = len(server.requests())
        second = run_suite(tmp_path, *args)
        log = server.requests()

    by_index = {i: [r for r in log[:mark] if r.index == i] for i in range(PROMPTS)}
    prompt_of = {i: rs[0].prompt for i, rs in by_index.items()}

    # Every item is in results.jsonl, answered or recorded as an error; only the exhausted one failed.
    for run in (first, second):
        assert run.returncode == 1, run.output
        records = {r["prompt"]: r for r in run.records}
        assert set(records) == set(prompt_of.values())
        statuses = {i: records[prompt_of[i]]["status"] for i in range(PROMPTS)}
        assert statuses == {i: {4: "invalid", 5: "error"}.get(i, "ok") for i in range(PROMPTS)}
        assert records[prompt_of[4]]["raw"] == "", "an empty completion is an answer, read as invalid"
        assert "overloaded" in records[prompt_of[5]]["error"]
        case = run.case("neutral-end-std-one-word")
        assert case["breaches"] == ["error_rate"] and case["scores"]["error_rate"] == 1 / PROMPTS
        assert re.search(r"error_rate +=  *0\.083 > 0\.050", run.output), "the failure says why"

    # Each fault was retried once and then answered; the failing prompt got its whole retry budget.
    assert [r.fault for r in by_index[0]] == ["rate-limit", "ok"]
    assert [r.fault for r in by_index[1]] == ["server-error", "ok"]
    assert [r.fault for r in by_index[2]] == ["hang", "ok"]
    assert [r.fault for r in by_index[3]] == ["malformed", "ok"]
    assert [r.fault for r in by_index[4]] == ["empty"]
    assert [r.status for r in by_index[5]] == [500] * (NUM_RETRIES + 1)
    assert all(len(by_index[i]) == 1 for i in range(6, PROMPTS))

    # Retry-After is honoured: the retry came no sooner than the server asked (server-side timestamps).
    refused, retried = by_index[0]
    assert retried.start - refused.end >= RETRY_AFTER

    # The rerun sent only the prompt without an answer: nothing cached was asked for again.
    assert first.summary["prompts_sent"] == PROMPTS and second.summary["prompts_sent"] == 1
    assert {r.prompt for r in log[mark:]} == {prompt_of[5]}
    assert len(log[mark:]) == NUM_RETRIES + 1


# A server (or a proxy before it) answering 200 with a body that is no completion: said as what it is, an
# error reply of the server's, never as the 500 litellm makes of it.

TOKENIZER = REPO / "fixtures" / "models" / "mathcomp-tiny"
NOT_JSON = "HTTP 200 with a body that is not JSON"


def _ask(url: str, n: int, **options: object) -> list[Response]:
    """``n`` prompts of the fixed set through the backend a run would make for ``options``."""
    rows = stratified.draw(scenarios.load(REPO / "fixtures" / "scenarios.csv"), n)
    prompt_set = prompt_sets.load_prompt_set("hf")
    names = prompt_sets.std_names(prompt_set)
    asked = [prompt_sets.build(s, Condition("neutral", "end"), prompt_set, names) for s in rows]
    backend = create(models.resolve("openai/tiny"), BackendOptions(api_base=url, num_retries=0, **options))  # type: ignore[arg-type]
    try:
        return backend.complete(asked, Decoding(max_new_tokens=8))
    finally:
        backend.close()


class NotOpenAIServer(FaultServer):
    """The fault server whose `malformed` replies are JSON, but no completion (a proxy's own answer)."""

    def _respond(self, fault: Fault, body: dict[str, Any], prompt: str) -> web.Response:
        if fault.kind == "malformed":
            return web.json_response({"status": "ok", "result": "queued"})
        return super()._respond(fault, body, prompt)


@pytest.mark.parametrize("batching", ["chat", "completions"])
@pytest.mark.parametrize(
    ("server_class", "said"),
    [
        (FaultServer, (NOT_JSON, '{"id": "chatcmpl-x", "choices": [{"mess')),
        (NotOpenAIServer, ("HTTP 200 with a body that is not an OpenAI ", "")),
    ],
)
def test_a_200_whose_body_is_no_completion_is_said_as_such_and_counted_as_an_error_reply(
    batching: str, server_class: type[FaultServer], said: tuple[str, str]
) -> None:
    kind, shown = said
    listed = [{"id": "tiny", "object": "model", "root": str(TOKENIZER)}]
    with server_class(schedule=lambda index, attempt: Fault("malformed"), models=listed).running() as server:
        answers = _ask(server.url, 2, api_batching=batching, max_error_streak=50)
        with pytest.raises(ServerGoneError) as gone:
            _ask(server.url, 12, api_batching=batching, max_error_streak=3, max_concurrency=1, batch_size=1)
    for answer in answers:
        assert answer.error is not None and answer.error.startswith(kind), answer.error
        assert shown in answer.error and "500" not in answer.error, answer.error
    line = str(gone.value)
    assert "error replies in a row and no answer: HTTP 200 with a body that is not " in line, line
    assert kind in line and "HTTP 500" not in line, line
