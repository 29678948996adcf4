"""A real OpenAI-compatible server on 127.0.0.1: `transformers serve` with a local model directory, forked
from this worker's warm parent (helpers/warm_runs.py) where one runs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import warm_runs


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def transformers_serve(model_dir: Path, log: Path) -> Iterator[str]:
    """Start the server, wait for /health, yield its /v1 base URL, stop it on exit."""
    port = free_port()
    command = [
        _transformers(),
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        "--log-level",
        "warning",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while not _healthy(base):
            if proc.poll() is not None or time.monotonic() > deadline:  # hang guard
                raise RuntimeError(f"transformers serve did not come up:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield f"{base}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _transformers() -> str:
    """The `transformers` command: the warm parent's stand-in for it where one runs (the server is forked
    from a process that has torch and transformers imported: a few CPU seconds less to start), else the
    console script."""
    script = Path(sys.executable).with_name("transformers")
    shims = warm_runs.stand_ins({"transformers": [str(script)]})
    return str(shims["transformers"]) if shims else str(script)


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False
