"""A warm parent for the suite runs the tests start: ``python tests/helpers/warm_parent.py``.

A suite run in a fresh interpreter spends most of its seconds importing torch, transformers and litellm
(about 11 s of CPU on 2 cores) before it asks a model anything, and the project's tests start hundreds of
them. This process imports those, pytest and the pytest plugins once (helpers/warm_preload.py; under xdist,
each worker's parent is forked already warm from helpers/warm_zygote.py), then forks one child per run: the
child is a process of its own (its own exit code, environment, working directory, output and signals) that
runs `python -m pytest ARGS` as a fresh one would, less the imports. The project's own modules are
imported here too (a forked symbolic run then spends 0.29 CPU s, not 0.48), all but the suite's test
modules and conftest files (``NOT_PRELOADED``), which pytest collects and rewrites in the child as it does
in a fresh run. None of the project's modules reads the environment or the working directory as it
imports (tests/test_warm_parent.py checks), so the child's are the ones that count. A preloaded module
that belongs to a pytest plugin's distribution (litellm brings anyio; the project is one) is marked as
one pytest does not rewrite: a fresh run would rewrite its asserts, the child cannot, and pytest would say
so in a warning no fresh run prints. The one difference left: an assert inside the project's own code
that fails says less in a forked run than in a fresh one.

The parent stays single-threaded (forking is safe only then) and answers runs over its stdin and stdout,
one JSON line each way:
``{"args": [...], "cwd": DIR, "env": {...}, "stdout": FILE, "stderr": FILE, "timeout": SECONDS}`` (and
``"stdin": FILE``, else the null device; a terminal's path for all three runs the child on that terminal;
``"module": NAME`` runs `python -m NAME ARGS`, the project's command line say, where pytest is the default) ->
``{"returncode": N, "cpu": SECONDS}`` (negative N: killed by that signal; the child's CPU, user and system)
or ``{"timed_out": true}`` (the child was killed); ``{"usage": true}`` -> ``{"cpu": SECONDS}``, what the
children the stand-ins asked for spent since the last such request.
Given a path (``python tests/helpers/warm_parent.py SOCKET [WORKERS]``), it also listens there for the
stand-ins of helpers/warm_python.py, forking one child for each command they hand it, while other children
run. WORKERS is every child's ``sys.executable``: the stand-in their xdist workers start with.
It says ``{"ready": true, "pid": PID}`` once it serves, and exits when its stdin closes, killing the children
still running. A child's exit runs only the finalizers it registered itself, not those of the libraries
preloaded here (warm_preload.py), as a fresh run's does.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

if __package__:  # imported by a test as helpers.warm_parent
    from . import warm_python
    from .warm_preload import BARE, preload
else:  # run as a script: its own folder (tests/helpers) is first on sys.path
    import warm_python  # type: ignore[no-redef]
    from warm_preload import BARE, preload  # type: ignore[no-redef]

def child(request: dict[str, Any]) -> int:
    """In the forked child: become `python -m pytest ARGS` in ``cwd`` with ``env``; its exit code."""
    null = os.open(request.get("stdin", os.devnull), os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    for source, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(source, target)
        os.close(source)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    warm_python.enter(request["cwd"], request["env"], request["cwd"])  # as `python -m` puts the cwd first
    return _run_module(request.get("module", "pytest"), request["args"])


def _forked(inherited: list[int], body: Callable[[], int]) -> NoReturn:
    """In a forked child: close the parent's socket ends (``inherited``), run ``body`` and exit as the
    interpreter exits, with its code (1 and the traceback printed where it raised)."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        code = body()
    except BaseException:
        import traceback

        traceback.print_exc()
    _exit(code)


def _exit(code: int) -> NoReturn:
    """End the child as the interpreter ends: wait for its threads, run its exit functions, flush."""
    try:
        import threading

        threading._shutdown()  # type: ignore[attr-defined]
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _run_module(module: str, args: list[str]) -> int:
    """`python -m MODULE ARGS` in this process: its exit code."""
    import runpy

    found = importlib.util.find_spec(f"{module}.__main__")
    sys.argv = [found.origin if found is not None and found.origin else module, *args]
    try:
        if module == "pytest":
            import pytest

            return int(pytest.main())
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return 0
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else int(stop.code is not None)


@dataclass
class Running:
    """A forked child and where its end goes: a reply line on stdout, or the stand-in's socket."""

    deadline: float | None
    conn: socket.socket | None = None


@dataclass
class Parent:
    listener: socket.socket | None
    started_with: dict[str, str]
    """The environment the parent started with: a command whose READ_AT_IMPORT values differ runs afresh."""
    running: dict[int, Running] = field(default_factory=dict)
    served_cpu: float = 0.0
    """CPU seconds of the children the stand-ins asked for, not yet reported (a "usage" request)."""
    poll: float = 0.02
    """Seconds between looks at the children while some run (a run's deadline, a stand-in's end)."""

    def sockets(self) -> list[socket.socket]:
        ends = [r.conn for r in self.running.values() if r.conn is not None]
        return ([self.listener] if self.listener is not None else []) + ends

    def start(self, request: dict[str, Any]) -> None:
        """A stdin request: fork its child (or answer a usage request at once)."""
        if request.get("usage"):
            _reply({"cpu": self.served_cpu})
            self.served_cpu = 0.0
            return
        inherited = [s.fileno() for s in self.sockets()]
        pid = os.fork()
        if pid == 0:
            _forked(inherited, lambda: child(request))
        self.running[pid] = Running(time.monotonic() + float(request["timeout"]))

    def accept(self) -> None:
        """A connection on the socket: its request and descriptors, for ``handle``."""
        assert self.listener is not None
        conn, _ = self.listener.accept()
        conn.settimeout(30)
        fds: list[int] = []
        try:
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            while not message.endswith(b"\n"):
                more = conn.recv(1 << 20)
                if not more:
                    raise ValueError("the stand-in closed before its request ended")
                message += more
            self.handle(json.loads(message), fds, conn)
        except (OSError, ValueError) as failed:
            refuse(conn, str(failed))
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def handle(self, request: dict[str, Any], fds: list[int], conn: socket.socket) -> None:
        """A stand-in's command: fork it, or send it back to run afresh."""
        why = warm_python.refusal(request, self.started_with, os.environ)
        command = warm_python.parsed(request["argv"])
        if why is not None or command is None or len(fds) != 3:
            refuse(conn, why or "no stdin, stdout and stderr")
            return
        pid = os.fork()
        if pid == 0:
            _forked(self.inherited(conn), lambda: _command(command, request, fds))
        if request.get("group"):  # here as well as in the child: before the stand-in can signal it
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        self.running[pid] = Running(None, conn)

    def inherited(self, conn: socket.socket) -> list[int]:
        """The descriptors of this process's sockets, which a child it forks closes."""
        return [s.fileno() for s in self.sockets()] + [conn.fileno()]

    def hung_up(self, conn: socket.socket) -> None:
        """A stand-in's socket is readable: it ended (killed), so its command is killed too."""
        for pid, running in self.running.items():
            if running.conn is conn:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                conn.close()
                running.conn = None

    def reap(self) -> None:
        """Answer for every child that ended; kill those whose time is up."""
        while self.running:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            running = self.running.pop(pid)
            cpu = usage.ru_utime + usage.ru_stime
            ended = {"returncode": os.waitstatus_to_exitcode(status), "cpu": cpu}
            if running.deadline is not None:
                _reply(ended)
                continue
            self.served_cpu += cpu
            if running.conn is not None:
                with contextlib.suppress(OSError):
                    running.conn.sendall(json.dumps(ended).encode() + b"\n")
                running.conn.close()
        for pid, running in list(self.running.items()):
            if running.deadline is not None and time.monotonic() > running.deadline:  # hang guard
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del self.running[pid]
                _reply({"timed_out": True})

    def serve(self) -> None:
        """Until stdin closes: stdin's requests and the stand-ins' connections, each child as it ends."""
        pending = b""
        while True:
            watched: list[Any] = [0, *self.sockets()]
            readable, _, _ = select.select(watched, [], [], self.poll if self.running else None)
            for source in readable:
                if source == 0:
                    chunk = os.read(0, 1 << 16)
                    if not chunk:
                        self.end()
                        return
                    pending += chunk
                    while b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        self.start(json.loads(line))
                elif source is self.listener:
                    self.accept()
                else:
                    self.hung_up(source)
            self.reap()

    def end(self) -> None:
        for pid in self.running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def refuse(conn: socket.socket, why: str) -> None:
    """Send a stand-in (or a worker) back to start afresh, saying why."""
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps({"refused": why}).encode() + b"\n")
    conn.close()


def _command(command: warm_python.Command, request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: a stand-in's command on its descriptors (``fds``: its stdin, stdout and
    stderr), with the signals it ignores ignored, leading a process group of its own where the stand-in
    passes signals to the group; its exit code."""
    if request.get("group"):
        os.setpgid(0, 0)
    for source, target in zip(fds, (0, 1, 2), strict=True):
        os.dup2(source, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    warm_python.dispose(request.get("ignored", []))
    return warm_python.run(command, request["cwd"], request["env"])


def _reply(message: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def main() -> None:
    started_with = dict(os.environ)  # before the imports, some of which set variables of their own
    if os.environ.get(warm_python.SWITCH) != BARE:
        preload()
    serve(sys.argv[1] if len(sys.argv) > 1 else None, sys.argv[2:3], started_with)


def serve(socket_path: str | None, workers: list[str], started_with: dict[str, str]) -> None:
    """Preloaded: say ready on stdout, then serve until stdin closes (the stand-ins on ``socket_path``,
    every child's xdist workers started by ``workers``' stand-in)."""
    if workers:  # every child's xdist workers forked from here too (warm_runs._started)
        sys.executable = workers[0]
    listener = None
    if socket_path is not None:  # the stand-ins' socket (none where its path is too long: they then start afresh)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(socket_path)
            listener.listen(16)
        except OSError:
            listener.close()
            listener = None
    _reply({"ready": True, "pid": os.getpid()})
    Parent(listener, started_with).serve()


if __name__ == "__main__":
    main()
