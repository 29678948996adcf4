"""The model server a run starts for itself (--model=vllm:... without --api-base).

Started once, before any case, by the process that runs the session (the xdist controller, or the
only process), and handed to every xdist worker through its workerinput; stopped when pytest ends
(session end, Ctrl-C, a usage error). If pytest itself is killed, the server's watchdog ends it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ..backends.models import resolve
from ..backends.vllm.server import Server
from ..settings import Settings

WORKERINPUT = "mathcomp_vllm_servers"
_SERVER = pytest.StashKey[Server]()


def _with_servers(settings: Settings, servers: tuple[tuple[str, str], ...]) -> Settings:
    return replace(settings, backend=replace(settings.backend, vllm_servers=servers))


def served(config: pytest.Config, settings: Settings) -> Settings:
    """``settings`` with the URL of the run's vLLM server: started here, or the controller's for a worker.

    Raises BackendError (with the end of the server's log) when the server cannot start.
    """
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        pairs = tuple((str(name), str(url)) for name, url in workerinput.get(WORKERINPUT, ()))
        return _with_servers(settings, pairs) if pairs else settings
    spec = resolve(settings.model, config=settings.backend.model_config)
    if spec.kind != "vllm" or settings.backend.api_base or config.option.collectonly:
        return settings
    from ..backends.vllm.engine import serve

    server = serve(spec.name, settings.backend, settings.dataset_cache / "vllm")
    config.stash[_SERVER] = server
    return _with_servers(settings, ((spec.name, server.api_base),))


def to_worker(node: Any, settings: Settings) -> None:
    """Hand the run's servers to an xdist worker (it starts none of its own)."""
    node.workerinput[WORKERINPUT] = [list(pair) for pair in settings.backend.vllm_servers]


def header(config: pytest.Config) -> list[str]:
    server = config.stash.get(_SERVER, None)
    return [f"vllm: server at {server.root}, log {server.log}"] if server is not None else []


def stop(config: pytest.Config) -> None:
    """Stop the server this process started, if any (safe to call twice)."""
    server = config.stash.get(_SERVER, None)
    if server is not None:
        server.stop()
        del config.stash[_SERVER]
