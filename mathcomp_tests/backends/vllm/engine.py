"""`vllm:<directory or hub id>`: the engine users run at scale, driven at the engine's speed.

The model is served by vLLM's OpenAI-compatible server: one the run started (the plugin starts it once,
before any case, and shares it with every xdist worker), one this backend starts itself when it has none
(a judge or baseline model), or one already running (--api-base). Prompts are rendered here with the
model's own chat template and sent in batches to /v1/completions (see backends/completions/backend.py).
"""

from __future__ import annotations

from pathlib import Path

from ...settings import BackendOptions
from ..completions.backend import CompletionsBackend, split_base
from ..model_files import locate
from . import server as vllm_server


def weights(name: str) -> tuple[Path, str]:
    """The model's directory (a local one, or the hub snapshot) and its identity (content fingerprint,
    or hub commit): the same rule as the hf backend, so one set of weights has one identity."""
    return locate(name)


def serve(name: str, options: BackendOptions, log_dir: Path | None = None) -> vllm_server.Server:
    """Start a server for ``name`` from --vllm-python with the --vllm-* options; healthy on return."""
    directory, _ = weights(name)
    return vllm_server.start(vllm_server.find_python(options.vllm_python), str(directory), options, log_dir)


class VLLMBackend(CompletionsBackend):
    """A model served by vLLM, asked in batches; its cache identity includes what vLLM decides."""

    def __init__(self, name: str, options: BackendOptions | None = None):
        options = options or BackendOptions()
        self.model_id = f"vllm:{name}"
        self.directory, self.weights = weights(name)
        started = dict(options.vllm_servers).get(name)
        self.external = options.api_base is not None and started is None
        self._server: vllm_server.Server | None = None
        url = started or options.api_base
        if url is None:
            self._server = serve(name, options)
            url = self._server.api_base
        try:
            self._start(url, (str(self.directory), name), str(self.directory), options)
            self.version = str(self._get_json(split_base(url)[0] + "/version").get("version", ""))
        except BaseException:
            self.close()
            raise
        self.dtype = options.vllm_dtype or (None if self.external else "auto")
        self.tensor_parallel_size = options.vllm_tensor_parallel_size
        self.vllm_args = options.vllm_args
        self.revision = options.model_revision or self.weights

    def cache_identity(self) -> dict[str, object]:
        """The weights by content, vLLM's version, the dtype (None: whatever an external server was
        started with), the tensor-parallel split and extra server arguments, the chat template, and the
        request's own fields."""
        return {
            **super().cache_identity(),
            "backend": "vllm",
            "served": {"max_model_len": self.served.get("max_model_len")},  # not its path: the weights say it
            "weights": self.weights,
            "vllm_version": self.version,
            "dtype": self.dtype,
            "tensor_parallel_size": self.tensor_parallel_size,
            "vllm_args": self.vllm_args,
        }

    def close(self) -> None:
        if hasattr(self, "client"):
            super().close()
        if self._server is not None:
            self._server.stop()
            self._server = None
