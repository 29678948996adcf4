"""Before any case runs: can the API model be reached, and what does its server say it serves?

An OpenAI-compatible server answers ``GET /models``; the entry for our model (its id, the weights path
vLLM reports as ``root``, ...) becomes part of the cache key, so a server restarted with other weights
under another path is not answered from the old model's cache. Fields that change on every request
(``created``, vLLM's ``permission``) are left out.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ..base import BackendError
from ..secrets import redact

STABLE_FIELDS = ("id", "object", "owned_by", "root", "parent", "max_model_len", "revision", "version")
"""What a /models entry may say about the weights it serves and that does not change per request."""
TIMEOUT = 10.0


def served_model(
    api_base: str, model: str, api_key: str | None, timeout: float = TIMEOUT
) -> dict[str, Any] | None:
    """The server's own description of ``model`` (stable fields only), or None when it says nothing.

    Raises BackendError when the server cannot be reached, refuses the key or fails (a 5xx on its model
    list): the run cannot work.
    """
    url = api_base.rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={"User-Agent": "mathcomp-tests"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = reply.read(1 << 22)
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise BackendError(
                f"the server at {api_base} refused the API key (HTTP {exc.code}); set the key its provider "
                "reads (OPENAI_API_KEY for openai/...) or put api_key in the --model-config deployment"
            ) from exc
        if exc.code >= 500:
            raise BackendError(
                redact(
                    f"the model server at {api_base} answered HTTP {exc.code} to GET {url}: it is not working; "
                    "fix or restart it, or fix --api-base"
                )
            ) from exc
        return None  # reachable; it just does not list its models
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BackendError(
            redact(f"cannot reach the model server at {api_base} ({reason}); start it, or fix --api-base")
        ) from exc
    try:
        entries = json.loads(body).get("data", [])
    except (ValueError, AttributeError):
        return None
    name = model.split("/", 1)[1] if "/" in model else model
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") in (name, model):
            return {k: entry[k] for k in STABLE_FIELDS if k in entry}
    return None


def check_provider(litellm: Any, model: str, has_base: bool, has_key: bool) -> None:
    """A model string litellm can route, and (for a hosted provider) the key it needs in the environment."""
    try:
        litellm.get_llm_provider(model)
    except Exception as exc:  # litellm raises BadRequestError for an unknown provider
        raise BackendError(
            f"--model={model} is not a model string litellm can route (no known provider prefix). A Hugging "
            f"Face model is written hf:{model}; an OpenAI-compatible server is openai/<name> with --api-base."
        ) from exc
    if has_base or has_key:
        return
    missing = litellm.validate_environment(model).get("missing_keys") or []
    if missing:
        raise BackendError(f"--model={model} needs {', '.join(missing)} in the environment")
