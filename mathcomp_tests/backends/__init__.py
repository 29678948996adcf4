"""Backends: the only code that talks to a model. Each is imported when chosen, not before.

``REGISTRY`` maps a model kind (what models.resolve makes of --model) to the module and class that serve
it: a new backend is its module and one line here (and, if it has a spelling of its own, one in
models.resolve).
"""

from __future__ import annotations

import importlib

from ..settings import BackendOptions
from .base import Backend, BackendError
from .models import ModelSpec

__all__ = ["REGISTRY", "Backend", "BackendError", "BackendOptions", "create"]

REGISTRY: dict[str, str] = {
    "symbolic": "mathcomp_tests.backends.local.symbolic:SymbolicBackend",
    "hf": "mathcomp_tests.backends.local.hf:HFBackend",
    "api": "mathcomp_tests.backends.chat.api:APIBackend",
    "vllm": "mathcomp_tests.backends.vllm.engine:VLLMBackend",
    "completions": "mathcomp_tests.backends.completions.backend:CompletionsBackend",
    "batch": "mathcomp_tests.backends.batch.backend:BatchBackend",
}
"""Model kind -> ``module:Class``; the class is called with (model name, BackendOptions). An api model
with --api-batching=completions is served by `completions`, under --batch by `batch`."""


def create(spec: ModelSpec, options: BackendOptions) -> Backend:
    """The backend for a resolved --model; heavy libraries load here, not at import time."""
    kind = "completions" if spec.kind == "api" and options.api_batching == "completions" else spec.kind
    kind = "batch" if spec.kind == "api" and options.batch is not None else kind
    target = REGISTRY.get(kind)
    if target is None:
        raise BackendError(f"no backend for model kind {kind!r}; known: {', '.join(REGISTRY)}")
    module, name = target.split(":")
    factory = getattr(importlib.import_module(module), name)
    backend: Backend = factory(spec.name, options)
    return backend
