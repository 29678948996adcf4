"""Backends: the only code that talks to a model. Each is imported when chosen, not before."""

from __future__ import annotations

from ..models import ModelSpec
from .base import Backend, BackendError

__all__ = ["Backend", "BackendError", "create"]


def create(
    spec: ModelSpec,
    *,
    api_base: str | None = None,
    device: str = "auto",
    batch_size: int = 16,
    max_concurrency: int = 16,
) -> Backend:
    """The backend for a resolved --model; heavy libraries load here, not at import time."""
    if spec.kind == "symbolic":
        from .symbolic import SymbolicBackend

        return SymbolicBackend()
    if spec.kind == "hf":
        from .hf import HFBackend

        return HFBackend(spec.name, device=device, batch_size=batch_size)
    if spec.kind == "api":
        from .api import APIBackend

        return APIBackend(spec.name, api_base=api_base, max_concurrency=max_concurrency)
    raise BackendError(f"no backend for model kind {spec.kind!r}")
