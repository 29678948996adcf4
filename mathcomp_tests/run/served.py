"""Which model the server's replies name, against the one the run asked for.

Servers alias names (a vLLM --served-model-name, a proxy's route), so a different name is a warning, not an
error; but a gate run answered by other weights than the user meant must not pass silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backends.base import BackendError
from ..backends.router import plan
from ..settings import Settings


def asked_names(settings: Settings) -> list[str]:
    """The model names the requests carry: each deployment's model, without its provider prefix."""
    try:
        deployments = plan(settings.model, settings.backend).deployments
    except BackendError:
        return [settings.model]
    names = [str(d["litellm_params"].get("model", "")) for d in deployments]
    return sorted({n.split("/", 1)[1] if "/" in n else n for n in names if n})


def served_model(settings: Settings, records: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """summary.json's `served_model`: the names asked for and the names the replies gave (None when no
    reply named a model: a local backend, or a server that does not say)."""
    named = sorted({str(r["served_model"]) for r in records if r.get("served_model")})
    if not named:
        return None
    asked = asked_names(settings)
    return {"asked": asked, "named": named, "differs": any(n not in asked for n in named)}


def warning(summary: dict[str, Any]) -> list[str]:
    """The line said when the replies named another model than the one asked for."""
    served = summary.get("served_model")
    if not served or not served["differs"]:
        return []
    other = ", ".join(n for n in served["named"] if n not in served["asked"])
    return [
        f"WARNING: the server's replies name the model {other}, not {', '.join(served['asked'])} as asked; "
        "a server may alias names, but check it serves the weights you meant to gate"
    ]
