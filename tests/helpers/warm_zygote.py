"""One preloaded process for all the test workers: ``python tests/helpers/warm_zygote.py SOCKET``.

Each xdist worker has a warm parent of its own (helpers/warm_parent.py), and each spent about 7.5 CPU seconds
importing torch, transformers, litellm and the project before its first run. Under xdist, the process that
starts the workers starts this one instead (tests/conftest.py), which imports all that once; a worker's warm
parent is then forked from it, already warm, and serves that worker alone, as one it started itself would:
its own runs, stand-ins, socket and CPU accounting.

A worker asks over SOCKET, handing over two pipe ends (the parent's stdin and stdout) with one JSON line:
``{"socket": PATH, "workers": [SHIM], "env": {...}}`` (what ``python warm_parent.py PATH SHIM`` takes, and
the worker's environment); the parent forked for it says ``{"ready": true, "pid": PID}`` on that stdout. A worker whose
environment differs in what the preloaded libraries read as they import is refused (``{"refused": WHY}``
on the socket) and starts a parent of its own. Each parent ends when its worker closes its stdin; this
process, when its own stdin closes and its parents have ended (so that what they spent is counted as its
children's, and the test run's, CPU).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import sys
from typing import Any, NoReturn

if __package__:  # imported by a test as helpers.warm_zygote
    from . import warm_parent, warm_python
else:  # run as a script: its own folder (tests/helpers) is first on sys.path
    import warm_parent  # type: ignore[no-redef]
    import warm_python  # type: ignore[no-redef]


def _become_parent(
    request: dict[str, Any], fds: list[int], closed: list[int], started_with: dict[str, str]
) -> NoReturn:
    """In the forked child: the worker's pipe ends as stdin and stdout, then a warm parent until its
    stdin closes."""
    code = 1
    try:
        for fd in closed:
            os.close(fd)
        for source, target in zip(fds, (0, 1), strict=True):
            os.dup2(source, target)
            os.close(source)
        warm_parent.serve(request["socket"], request.get("workers", []), started_with)
        code = 0
    finally:
        os._exit(code)


def _fork(conn: socket.socket, listener: socket.socket, started_with: dict[str, str]) -> None:
    """One worker's request: fork its parent, or refuse it."""
    conn.settimeout(30)
    fds: list[int] = []
    try:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 2)
        while not message.endswith(b"\n"):
            more = conn.recv(1 << 20)
            if not more:
                raise ValueError("the worker closed before its request ended")
            message += more
        request = json.loads(message)
        check = {"argv": ["-c", "pass"], "env": request.get("env", {})}
        why = warm_python.refusal(check, started_with, os.environ) if len(fds) == 2 else "no stdin and stdout"
        if why is not None:
            conn.sendall(json.dumps({"refused": why}).encode() + b"\n")
            return
        if os.fork() == 0:
            _become_parent(request, fds, [0, listener.fileno(), conn.fileno()], started_with)
        conn.sendall(json.dumps({"forked": True}).encode() + b"\n")
    except (OSError, ValueError) as failed:
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps({"refused": str(failed)}).encode() + b"\n")
    finally:
        conn.close()
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def main() -> None:
    started_with = dict(os.environ)  # before the imports, some of which set variables of their own
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(16)  # the workers that ask while it imports wait
    sys.stdout.buffer.write(b'{"listening": true}\n')
    sys.stdout.buffer.flush()
    if os.environ.get(warm_python.SWITCH) != warm_parent.BARE:
        warm_parent.preload()
    while True:
        watched: list[Any] = [0, listener]
        readable, _, _ = select.select(watched, [], [], 1.0)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if 0 in readable and not os.read(0, 1 << 16):
            break
        if listener in readable:
            conn, _ = listener.accept()
            _fork(conn, listener, started_with)
    listener.close()
    with contextlib.suppress(ChildProcessError):
        while True:  # each parent ends as its worker closes its stdin: its CPU is then counted here
            os.waitpid(-1, 0)


if __name__ == "__main__":
    main()
