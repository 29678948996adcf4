"""Backends: the only code that talks to a model. Each is imported when chosen, not before."""

from __future__ import annotations

from .base import Backend, BackendError
from .models import ModelSpec
from .options import BackendOptions

__all__ = ["Backend", "BackendError", "BackendOptions", "create"]


def create(spec: ModelSpec, options: BackendOptions) -> Backend:
    """The backend for a resolved --model; heavy libraries load here, not at import time."""
    if spec.kind == "symbolic":
        from .symbolic import SymbolicBackend

        return SymbolicBackend()
    if spec.kind == "hf":
        from .hf import HFBackend

        return HFBackend(spec.name, options)
    if spec.kind == "api":
        from .api import APIBackend

        return APIBackend(spec.name, options)
    raise BackendError(f"no backend for model kind {spec.kind!r}")
