"""Spies: a real method still runs, and each call is counted (for tests that count events, not seconds)."""

from __future__ import annotations

from typing import Any

import pytest


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    """Every call of ``owner.name`` from now on, its arguments after ``self`` recorded; the method runs as
    before."""
    calls: list[tuple[Any, ...]] = []
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[1:])
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
