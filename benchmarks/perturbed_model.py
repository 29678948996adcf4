"""A pytest plugin (``-p benchmarks.perturbed_model``) that perturbs the run's model's answers, so that nights
of the symbolic reference differ from one another as a real model's do: ``--perturb-seed`` picks the night,
``--perturb-rate`` the share of one-word answers replaced by another label, ``--perturb-towards-cue`` the
share of cued prompts answered with the cue word's label (a fine-tune that follows cues). The choice of
each prompt is a hash of the seed and the prompt, so one night answers the same on every run."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from mathcomp_tests.backends.base import OnResponse
from mathcomp_tests.types import LABELS, Decoding, Prompt, Response, cue_label


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("perturbed model (benchmarks)")
    group.addoption("--perturb-seed", type=int, default=0, help="which night's perturbation")
    group.addoption(
        "--perturb-rate", type=float, default=0.0, help="share of answers replaced by another label"
    )
    group.addoption(
        "--perturb-towards-cue", type=float, default=0.0, help="share of cued prompts answered with the cue"
    )


def _draw(seed: int, prompt: Prompt, salt: str) -> float:
    """A number in [0, 1) fixed by the seed, the prompt's text and ``salt``."""
    digest = hashlib.blake2b(f"{seed}\0{salt}\0{prompt.text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class Perturbed:
    """The run's backend, its one-word answers perturbed (see the module's docstring)."""

    def __init__(self, inner: Any, seed: int, rate: float, towards_cue: float) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.revision = inner.revision
        self.seed, self.rate, self.towards_cue = seed, rate, towards_cue

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _answer(self, prompt: Prompt, response: Response) -> Response:
        said = response.text.strip().lower()
        if response.error or said not in LABELS:
            return response
        cue = cue_label(prompt.condition.framing)
        if cue is not None and _draw(self.seed, prompt, "cue") < self.towards_cue:
            return replace(response, text=cue)
        if _draw(self.seed, prompt, "flip") < self.rate:
            others = [y for y in LABELS if y != said]
            return replace(response, text=others[int(_draw(self.seed, prompt, "to") * len(others))])
        return response

    def complete(
        self, prompts: Sequence[Prompt], decoding: Decoding, on_response: OnResponse | None = None
    ) -> list[Response]:
        answered = self.inner.complete(prompts, decoding)
        out = [self._answer(p, r) for p, r in zip(prompts, answered, strict=True)]
        if on_response is not None:
            for index, response in enumerate(out):
                on_response(index, response)
        return out


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.pluginmanager.get_plugin("mathcomp-state")
    if state is None or config.option.collectonly:
        return
    option = config.option
    if option.perturb_rate or option.perturb_towards_cue:
        run = state.run
        run._backend = Perturbed(
            run.backend, option.perturb_seed, option.perturb_rate, option.perturb_towards_cue
        )
