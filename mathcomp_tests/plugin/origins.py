"""Where a refused model name came from: the option on the command line, or the environment variable
that gives its default (a CI job's MATHCOMP_MODEL is easy to forget), so the error says what to fix."""

from __future__ import annotations

import os

import pytest

from ..backends.models import UnknownModelError
from ..printable import printable
from .options import ENVIRONMENT

MODEL_OPTIONS = ("model", "judge_model", "baseline_model")
"""The options whose value models.resolve reads, in the order the run resolves them."""


def origin(config: pytest.Config, dest: str) -> str:
    """``--judge-model`` or, when the value came from the environment, ``$MATHCOMP_JUDGE_MODEL``."""
    option = "--" + dest.replace("_", "-")
    env = ENVIRONMENT.get(dest)
    args = [str(a) for a in config.invocation_params.args]
    typed = any(a == option or a.startswith(option + "=") for a in args)
    if env and not typed and os.environ.get(env) and os.environ[env] == config.getoption(dest):
        return f"${env}"
    return option


def unknown_model(config: pytest.Config, exc: UnknownModelError) -> str:
    """The error line for a model name that does not resolve, led by the option or variable it came from."""
    for dest in MODEL_OPTIONS:
        value = config.getoption(dest, None)
        if isinstance(value, str) and value.strip() == exc.given:
            return f"{origin(config, dest)}={printable(value)}: {exc}"
    return str(exc)
