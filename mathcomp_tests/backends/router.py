"""Where API requests go and how they are retried: always through a litellm Router.

litellm's Router retries 429s, 5xx and timeouts with exponential backoff plus jitter and honours
`Retry-After`; plain `acompletion(num_retries=...)` does neither. So even one server is a Router with
one deployment, built from --model and --api-base; --model-config gives several (one per host).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..finite import problem
from ..settings import BackendOptions
from . import secrets
from .base import BackendError
from .secrets import redact

OPENAI_COMPATIBLE = ("openai/", "hosted_vllm/")
"""Providers whose local servers usually take any key: one is made up when none is set."""
_SECRET_PARAM = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)
"""litellm_params never written anywhere (cache keys, records, reports)."""


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """A deployment's litellm_params less its secrets: what decides the answer, safe to store."""
    return {k: v for k, v in sorted(params.items()) if not _SECRET_PARAM.search(str(k))}


@dataclass(frozen=True)
class RouterPlan:
    """A Router's deployments and settings, and the model group every request asks for."""

    group: str
    model_list: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        """The cache identity: the group, and the servers behind it (never a key)."""
        bases = sorted(
            {
                str(d["litellm_params"]["api_base"])
                for d in self.deployments
                if d["litellm_params"].get("api_base")
            }
        )
        return redact(f"{self.group}@{','.join(bases)}" if bases else self.group)

    @property
    def deployments(self) -> list[dict[str, Any]]:
        return [d for d in self.model_list if d.get("model_name") == self.group]

    def identity(self) -> list[dict[str, Any]]:
        """Every deployment of the group by all its litellm_params but secrets, in a stable order."""
        params = [public_params(d["litellm_params"]) for d in self.deployments]
        return sorted(params, key=lambda p: json.dumps(p, sort_keys=True, default=str))


def plan(model: str, options: BackendOptions) -> RouterPlan:
    """One deployment from --model/--api-base, or the --model-config deployments named --model.

    The config's `router_settings` win over --num-retries and --request-timeout where they set them.
    """
    defaults = {
        "num_retries": options.num_retries,
        "timeout": options.request_timeout,
        "retry_after": 0,
    }
    if options.model_config is None:
        params: dict[str, Any] = {"model": model}
        if options.api_base:
            params["api_base"] = options.api_base
        # One deployment has nowhere else to go: cooling it down would only turn waits into errors.
        settings = {**defaults, "disable_cooldowns": True}
        return RouterPlan(model, [{"model_name": model, "litellm_params": _keyed(params)}], settings)
    if options.api_base:
        raise BackendError("give --api-base or --model-config, not both (put api_base in the config)")
    config = load_config(options.model_config)
    deployments = [{**d, "litellm_params": _keyed(d["litellm_params"])} for d in config["model_list"]]
    result = RouterPlan(model, deployments, {**defaults, **config["router_settings"]})
    if not result.deployments:
        names = sorted({str(d.get("model_name")) for d in result.model_list})
        raise BackendError(
            f"--model={model} names no model_name in {options.model_config}; it has: {', '.join(names)}"
        )
    return result


def _keyed(params: dict[str, Any]) -> dict[str, Any]:
    """A made-up key for an OpenAI-compatible server given none (vLLM takes any; the SDK insists on one)."""
    if (
        params.get("api_base")
        and "api_key" not in params
        and str(params.get("model", "")).startswith(OPENAI_COMPATIBLE)
        and not os.environ.get("OPENAI_API_KEY")
    ):
        return {**params, "api_key": "not-needed"}
    return params


def load_config(path: Path) -> dict[str, Any]:
    """A litellm Router config, YAML or JSON: `model_list` (required) and `router_settings` (optional).

    Other sections of a litellm proxy config are ignored, so one file can serve both.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BackendError(f"cannot read --model-config {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise BackendError(
            f"--model-config {path} is not UTF-8 text; expected a litellm Router config (YAML or JSON)"
        ) from exc
    import yaml

    try:
        config = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise BackendError(
            f"--model-config {path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}"
        ) from exc
    if (
        not isinstance(config, dict)
        or not isinstance(config.get("model_list"), list)
        or not config["model_list"]
    ):
        raise BackendError(f"--model-config {path} needs a non-empty `model_list` of deployments")
    for deployment in config["model_list"]:
        if not isinstance(deployment, dict) or not isinstance(deployment.get("litellm_params"), dict):
            raise BackendError(
                f"--model-config {path}: every deployment needs `model_name` and `litellm_params`"
            )
    if not isinstance(config.get("router_settings", {}), dict):
        raise BackendError(f"--model-config {path}: `router_settings` must be a mapping")
    _check_numbers(path, "router_settings", config.get("router_settings") or {})
    for n, deployment in enumerate(config["model_list"]):
        _check_numbers(path, f"model_list[{n}].litellm_params", deployment["litellm_params"])
        _hold_secrets(n, deployment["litellm_params"])
    return {"model_list": config["model_list"], "router_settings": config.get("router_settings") or {}}


_RANGES: dict[str, tuple[float, bool, bool]] = {
    # key: (low, above low rather than at least, a whole number)
    "num_retries": (0, False, True),
    "max_retries": (0, False, True),
    "allowed_fails": (0, False, True),
    "timeout": (0, True, False),
    "stream_timeout": (0, True, False),
}
"""Known numeric keys of router_settings and litellm_params; any other number must be finite and not
negative (retry waits, cooldowns, rpm/tpm, weights, ...)."""


def _check_numbers(path: Path, where: str, table: dict[str, Any]) -> None:
    """Every number in ``table`` is finite and in its range: a config's -5 retries or .nan timeout is a
    usage error naming the file and key, never handed to litellm."""
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        low, above, whole = _RANGES.get(str(key), (0, False, False))
        found = problem(value, low, None, above, whole)
        if found is not None:
            raise BackendError(f"--model-config {path}: {where}.{key} = {value!r}; {found}")


def _hold_secrets(n: int, params: dict[str, Any]) -> None:
    """A deployment's secrets (a literal key, or the variable `os.environ/NAME` names, whatever NAME is)
    are redacted from everything the run writes or prints, as the environment's keys are."""
    for name, value in params.items():
        if not _SECRET_PARAM.search(str(name)) or not isinstance(value, str):
            continue
        if value.startswith("os.environ/"):
            variable = value.removeprefix("os.environ/")
            secrets.hold(os.environ.get(variable), variable)
        else:
            secrets.hold(value, f"model_list[{n}].litellm_params.{name}")


def group_names(path: Path) -> tuple[str, ...]:
    """The model groups (`model_name`) a --model-config defines: what --model may name in it."""
    return tuple(sorted({str(d.get("model_name")) for d in load_config(path)["model_list"]}))


def build(router_plan: RouterPlan) -> Any:
    """The litellm Router for a plan (litellm is imported by the caller first, offline switches set)."""
    from litellm import Router

    try:
        return Router(model_list=router_plan.model_list, **router_plan.settings)
    except (TypeError, ValueError) as exc:
        raise BackendError(redact(f"litellm rejected the router configuration: {exc}")) from exc
