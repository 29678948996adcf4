"""Which model a run tested, for grouping runs across nights: the same weights are one model however their
path was spelled (a copy, a clone, another working directory), so local weights go by their content
digest; a hub model by its resolved id (the same under hf and vLLM); an API model by its model id."""

from __future__ import annotations

import re

from .model_files import fingerprint
from .models import ModelSpec

WEIGHTS_PREFIX = "weights:"


def model_identity(spec: ModelSpec, weights: str | None = None) -> str:
    """``weights:<digest>`` for a local directory (``weights``: the digest the backend computed already,
    so that gigabytes are not read twice; None: computed here), else the canonical hub or API id."""
    if spec.kind == "symbolic":
        return "symbolic"
    if spec.directory is not None:
        return WEIGHTS_PREFIX + (weights or fingerprint(spec.directory))
    return spec.canonical


def recorded_identity(spec: ModelSpec, revision: str | None) -> str:
    """The identity of a model a baseline file names: local weights by the digest recorded when it was
    written (its ``revision``, when that is one), so that weights changed since at the same path differ."""
    digest = revision if revision is not None and re.fullmatch(r"[0-9a-f]{12}", revision) else None
    return model_identity(spec, digest)
