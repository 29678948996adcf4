"""Which servers the batched completions path sends to, and the check that they serve one model.

One server is --api-base. Several are the deployments of a --model-config group (a litellm Router
config, the same file the chat path reads): each an OpenAI-compatible model (`openai/<served name>` or
`hosted_vllm/<served name>`) with its `api_base`, and optionally its own `api_key` and
`max_parallel_requests` (its requests in flight; else --max-concurrency). `router_settings` may set
`num_retries` and `timeout`, as on the chat path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from ...settings import BackendOptions
from .. import health, router
from ..base import BackendError
from ..liveness import Ping

HEALTH_TIMEOUT = 5.0
IDENTITY_FIELDS = ("id", "root", "max_model_len", "owned_by")
"""What a server's /v1/models entry says that decides answers (and so the cache key): every server of a
run must say the same."""


@dataclass(frozen=True)
class Target:
    """One server to send to: its OpenAI API base, the model name its requests carry, its key, and how
    many requests it may have in flight (None: --max-concurrency, else batched.IN_FLIGHT)."""

    api_base: str
    name: str
    api_key: str | None = None
    in_flight: int | None = None


def from_config(group: str, options: BackendOptions) -> tuple[list[Target], BackendOptions]:
    """The servers of --model-config's group ``group``, and the options with its router_settings'
    num_retries and timeout applied; BackendError naming the deployment that is no such server."""
    plan = router.plan(group, options)
    targets = []
    for n, deployment in enumerate(plan.deployments):
        params = deployment["litellm_params"]
        model, base = str(params.get("model", "")), params.get("api_base")
        where = f"--model-config {options.model_config}: deployment {n + 1} of {group}"
        if not model.startswith(router.OPENAI_COMPATIBLE) or not base:
            raise BackendError(
                f"{where} ({model or 'no model'}) is no OpenAI-compatible server: --api-batching=completions "
                "needs every deployment as `model: openai/<served name>` with its `api_base`"
            )
        limit = params.get("max_parallel_requests")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise BackendError(f"{where}: max_parallel_requests = {limit!r}; expected a whole number >= 1")
        targets.append(Target(str(base), model.split("/", 1)[1], deployment_key(params), limit))
    settings = plan.settings
    options = replace(
        options,
        num_retries=int(settings.get("num_retries", options.num_retries)),
        request_timeout=float(settings.get("timeout", options.request_timeout)),
    )
    return targets, options


def deployment_key(params: dict[str, Any]) -> str | None:
    """The key a deployment sends: its api_key (`os.environ/NAME` read from the environment), else
    OPENAI_API_KEY."""
    value = params.get("api_key")
    if isinstance(value, str) and value.startswith("os.environ/"):
        return os.environ.get(value.removeprefix("os.environ/"))
    return str(value) if value is not None else os.environ.get("OPENAI_API_KEY") or None


def same_model(listed: list[tuple[str, dict[str, Any]]], model: str) -> dict[str, Any]:
    """The /v1/models entry every server gave (server root, entry); BackendError naming the first server
    whose entry differs from the first's in what decides answers."""
    root, first = listed[0]
    want = {k: first.get(k) for k in IDENTITY_FIELDS}
    for other, entry in listed[1:]:
        got = {k: entry.get(k) for k in IDENTITY_FIELDS}
        if got != want:
            differ = ", ".join(
                f"{k} {got[k]!r} where {root} has {want[k]!r}" for k in IDENTITY_FIELDS if got[k] != want[k]
            )
            raise BackendError(
                f"the servers of {model} must serve the same model, and the server at {other} serves "
                f"another: {differ}"
            )
    return first


def pinger(root: str) -> Ping:
    """A health check of one server: None when it replies to GET /health (any status), else what failed.
    A client of its own: the requests' pool may be full of requests held open, and waiting for it is no
    failure to connect."""

    async def ping() -> str | None:
        import httpx

        try:
            async with health.client(HEALTH_TIMEOUT) as client:
                await client.get(root + "/health")
        except httpx.TransportError as exc:
            return f"GET {root}/health: {type(exc).__name__}: {exc}"
        return None

    return ping
