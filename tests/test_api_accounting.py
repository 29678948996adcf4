"""Tokens in and out as the server reports them, and cost where litellm's price map knows the model."""

from __future__ import annotations

import pytest
from helpers.fault_server import FaultServer
from helpers.suite_runner import REPO

from mathcomp_tests.backends.chat.api import APIBackend
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.prompts import build, load_prompt_set, std_names
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Prompt


def some_prompts(count: int) -> list[Prompt]:
    prompt_set = load_prompt_set("hf")
    rows = load(REPO / "fixtures" / "scenarios.csv")[:count]
    return [build(s, Condition("neutral", "end"), prompt_set, std_names(prompt_set)) for s in rows]


def test_tokens_and_cost_per_response() -> None:
    import litellm

    prompts = some_prompts(3)
    price = litellm.model_cost["gpt-4o-mini"]
    with FaultServer(answer="more").running() as server:
        for model in ("openai/gpt-4o-mini", "openai/a-local-model"):
            backend = APIBackend(model, BackendOptions(api_base=server.url))
            responses = backend.complete(prompts, Decoding(max_new_tokens=8))
            backend.close()
            for prompt, response in zip(prompts, responses, strict=True):
                assert response.input_tokens == len(prompt.text.split()) and response.output_tokens == 1
                if model.endswith("gpt-4o-mini"):
                    expected = (
                        response.input_tokens * price["input_cost_per_token"] + price["output_cost_per_token"]
                    )
                    assert response.meta["cost"] == pytest.approx(expected)
                else:
                    assert "cost" not in response.meta, "no price is made up for an unknown model"
