"""The range of every number option and numeric environment variable, checked before any case.

A number out of range, NaN or infinite is a usage error naming the option (or variable) and what it
takes: nothing is silently replaced, and nothing that is not a finite number reaches summary.json.
"""

from __future__ import annotations

import os
from typing import Any

from ...finite import parse, problem
from ...settings import SelectionError
from ..progress import DELAY_VARIABLE

OPTIONS: tuple[tuple[str, float, float | None, bool], ...] = (
    # (option, low, high or None, whether the value must be above low rather than at least low)
    ("--limit", 1, None, False),
    ("--generated", 0, None, False),
    ("--max-new-tokens", 1, None, False),
    ("--batch-size", 1, None, False),
    ("--max-concurrency", 1, None, False),
    ("--num-retries", 0, None, False),
    ("--request-timeout", 0, None, True),
    ("--max-error-rate", 0, 1, False),
    ("--temperature", 0, None, False),
    ("--samples", 1, None, False),
    ("--max-connection-failures", 1, None, False),
    ("--server-timeout", 0, None, True),
    ("--max-error-streak", 1, None, False),
    ("--batch-wait", 0, None, True),
    ("--batch-poll", 0, None, True),
    ("--vllm-tensor-parallel-size", 1, None, False),
    ("--vllm-data-parallel-size", 1, None, False),
    ("--vllm-max-model-len", 1, None, False),
    ("--vllm-gpu-memory-utilization", 0, 1, True),
    ("--vllm-start-timeout", 0, None, True),
)
VARIABLES: tuple[tuple[str, float, float | None, bool], ...] = ((DELAY_VARIABLE, 0, None, False),)
"""Environment variables read as numbers: the same rule as the options."""


def check(opt: Any, environ: Any = os.environ) -> None:
    """Raise SelectionError (a usage error) for the first number option or variable out of range."""
    for name, low, high, above in OPTIONS:
        value = opt(name.removeprefix("--").replace("-", "_"))
        found = None if value is None else problem(value, low, high, above)
        if found is not None:
            raise SelectionError(f"{name}={value}: {found}")
    for variable, low, high, above in VARIABLES:
        text = environ.get(variable)
        if text:
            parsed = parse(text, low, high, above)
            if isinstance(parsed, str):
                raise SelectionError(f"${variable}={text}: {parsed}")
