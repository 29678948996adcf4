"""One preloaded process for all the test workers: ``python tests/helpers/warm_zygote.py SOCKET``.

Each xdist worker had a warm parent of its own (helpers/warm_parent.py) that spent about 7.5 CPU seconds
importing torch, transformers, litellm and the project before its first run, and each worker imported much of
that again for the tests it runs itself. Under xdist, the process that starts the workers starts this one
first (tests/conftest.py, helpers/warm_runs.start_zygote), which imports all that once, and then:

- starts the workers: xdist starts each through a stand-in (helpers/warm_shim.py) that hands this process
  execnet's bootstrap command, which it forks as it forks any stand-in's command (warm_parent.Parent);
- forks each worker's warm parent, already warm, which then serves that worker alone, as one it started itself
  would: its own runs, stand-ins, socket and CPU accounting.

A worker asks for its parent over SOCKET, handing over two pipe ends (the parent's stdin and stdout) with one
JSON line: ``{"socket": PATH, "workers": [SHIM], "env": {...}}`` (what ``python warm_parent.py PATH SHIM``
takes, and the worker's environment); the parent forked for it says ``{"ready": true, "pid": PID}`` on that
stdout. A worker whose environment differs in what the preloaded libraries read as they import is refused
(``{"refused": WHY}``) and starts a parent of its own. Each parent ends when its worker closes its stdin;
this process, when its own stdin closes and its children have ended (so that what they spent is counted as
its children's, and the test run's, CPU).

A worker forked from here has the project's modules imported already, as a forked run has: pytest does not
rewrite their asserts (warm_preload marks them), so an assert inside the project's own code that fails says
less in a test than in a worker started afresh (``MATHCOMP_TESTS_WARM=0`` starts every process afresh).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any, NoReturn

if __package__:  # imported by a test as helpers.warm_zygote
    from . import warm_parent, warm_python
    from .warm_preload import BARE, preload
else:  # run as a script: its own folder (tests/helpers) is first on sys.path
    import warm_parent  # type: ignore[no-redef]
    import warm_python  # type: ignore[no-redef]
    from warm_preload import BARE, preload  # type: ignore[no-redef]


class Zygote(warm_parent.Parent):
    """A warm parent that also forks warm parents, and waits for its children as it ends."""

    poll = 0.5  # its children are the workers and their parents: no deadlines to keep

    def handle(self, request: dict[str, Any], fds: list[int], conn: socket.socket) -> None:
        if "socket" not in request:
            super().handle(request, fds, conn)
            return
        why: str | None = "no stdin and stdout"
        if len(fds) == 2:
            why = warm_python.environment_refusal(request.get("env", {}), self.started_with, os.environ)
        if why is not None:
            warm_parent.refuse(conn, why)
            return
        pid = os.fork()
        if pid == 0:
            _become_parent(request, fds, [0, *self.inherited(conn)], self.started_with)
        self.running[pid] = warm_parent.Running(None)
        conn.sendall(json.dumps({"forked": True}).encode() + b"\n")
        conn.close()

    def end(self) -> None:
        """Stdin closed: the workers' commands still running are killed (the process that started them is
        ending); the parents end with their workers, and are waited for."""
        for pid, running in self.running.items():
            if running.conn is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                os.waitpid(-1, 0)


def _become_parent(
    request: dict[str, Any], fds: list[int], closed: list[int], started_with: dict[str, str]
) -> NoReturn:
    """In the forked child: the worker's pipe ends as stdin and stdout, then a warm parent until its stdin
    closes."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a parent a worker starts itself has it
        for fd in closed:
            os.close(fd)
        for source, target in zip(fds, (0, 1), strict=True):
            os.dup2(source, target)
            os.close(source)
        warm_parent.serve(request["socket"], request.get("workers", []), started_with)
        code = 0
    finally:
        os._exit(code)


def main() -> None:
    # Ctrl-C on the test run reaches this process too (it is in the run's process group), and the parents it
    # forks: they end as the run does instead, when their stdin closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started_with = dict(os.environ)  # before the imports, some of which set variables of their own
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(16)  # the workers that ask while it imports wait
    sys.stdout.buffer.write(b'{"listening": true}\n')
    sys.stdout.buffer.flush()
    if os.environ.get(warm_python.SWITCH) != BARE:
        preload()
    Zygote(listener, started_with).serve()


if __name__ == "__main__":
    main()
