"""A warm parent for the suite runs the tests start: ``python tests/helpers/warm_parent.py``.

A suite run in a fresh interpreter spends most of its seconds importing torch, transformers and litellm
(about 11 s of CPU on 2 cores) before it asks a model anything, and the project's tests start hundreds of
them. This process imports those, pytest and the pytest plugins once, then forks one child per run: the
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
It exits when its stdin closes, killing the children still running.
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
else:  # run as a script: its own folder (tests/helpers) is first on sys.path
    import warm_python  # type: ignore[no-redef]

PYTEST_PARTS = (
    "_pytest.faulthandler", "_pytest.helpconfig", "_pytest.junitxml", "_pytest.pastebin", "_pytest.setuponly",
    "_pytest.setupplan", "_pytest.skipping", "_pytest.threadexception", "_pytest.tracemalloc", "_pytest.unittest",
    "_pytest.unraisableexception", "_pytest.warnings", "pdb", "pytest_html.hooks", "pytest_metadata.hooks",
)  # fmt: skip
"""What pytest and its plugins import as each run configures, not as pytest imports: preloaded too (a forked
symbolic run 0.26 CPU s, not 0.29). None reads the environment or the working directory as it imports
(tests/test_warm_parent.py checks); `_pytest._argcomplete` does, and is not here."""

PRELOADED = (
    "torch", "transformers", "transformers.models.llama.modeling_llama", "litellm", "sympy", "psutil", "accelerate",
    "jinja2", "scipy.special",
    # pytest and the plugins every run loads. Not xdist, which keeps the sys.path it is imported with for its
    # workers: here, it would be this process's, not the run's. Hypothesis (every run imports it, its plugin at
    # the least) keeps the working directory and the CI profile it is imported with: the child takes both
    # again (warm_python.enter).
    "pytest", "pytest_html.plugin", "pytest_metadata.plugin", "anyio.pytest_plugin", "hypothesis",
    *PYTEST_PARTS,
    # What `mathcomp history` and `mathcomp site` draw with (half a CPU second each): the child takes again
    # a `matplotlibrc` in its working directory (warm_python.enter); the variables it reads are READ_AT_IMPORT.
    "matplotlib.pyplot", "matplotlib.dates",
)  # fmt: skip


BARE = "bare"
"""MATHCOMP_TESTS_WARM=bare: a parent that preloads nothing, for a test about the parent itself, not its runs."""

PROJECT = "mathcomp_tests"
NOT_PRELOADED = (f"{PROJECT}.suite", f"{PROJECT}.starter", f"{PROJECT}.__main__")
"""The suite's test modules and conftest files (pytest imports them from their paths and rewrites them),
the starter's conftest template, and the command line's entry module."""


def project_modules(package: str = PROJECT) -> list[str]:
    """Every module of the project's ``package`` but NOT_PRELOADED (whose packages are not entered),
    importing each package to find its modules."""
    import importlib
    import pkgutil

    try:
        path = importlib.import_module(package).__path__
    except Exception:  # left for the child to fail on
        return []
    found = [package]
    for module in pkgutil.iter_modules(path, f"{package}."):
        if module.name.startswith(NOT_PRELOADED):
            continue
        found += project_modules(module.name) if module.ispkg else [module.name]
    return found


def preload() -> None:
    """Import what every hf or API run imports first, and the project's modules; a library that is missing
    is simply not preloaded, and a module that cannot be imported is left for the child to fail on."""
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for name in project_modules():
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    import importlib.metadata

    plugins = {
        name
        for dist in importlib.metadata.distributions()
        if any(ep.group == "pytest11" for ep in dist.entry_points)
        for name in _top_level(dist)
    }
    for name, module in list(sys.modules.items()):
        if module is not None and name.split(".")[0] in plugins:
            module.__doc__ = f"{module.__doc__ or ''}\nPYTEST_DONT_REWRITE"
    _keep_exit_finalizers_here()
    import gc

    gc.freeze()  # what was imported here is never garbage: pytest's collections at exit skip it


def _keep_exit_finalizers_here() -> None:
    """The finalizers the preloaded libraries registered to run at exit (torch's 180: the operators it
    registered, undone) are this process's, not its children's: a child's exit runs only those it made itself,
    as a fresh run that never imported the library does. Run in every child, torch's cost 0.2 CPU s a run."""
    import weakref

    for info in weakref.finalize._registry.values():  # type: ignore[attr-defined]
        info.atexit = False


def _top_level(dist: Any) -> set[str]:
    """The top-level modules and packages an installed distribution brings (Hypothesis: hypothesis and
    _hypothesis_globals, say), as pytest finds them for its plugins: from its files, else top_level.txt."""
    names = set((dist.read_text("top_level.txt") or "").split()) | {dist.metadata["Name"].replace("-", "_")}
    for file in dist.files or ():
        first = file.parts[0]
        if first.endswith(".py"):
            names.add(first[:-3])
        elif len(file.parts) > 1 and "." not in first:
            names.add(first)
    return names


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
        """A stand-in's command: fork it, or send it back to run afresh."""
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
            request = json.loads(message)
            why = warm_python.refusal(request, self.started_with, os.environ)
            command = warm_python.parsed(request["argv"])
            if why is not None or command is None or len(fds) != 3:
                conn.sendall(json.dumps({"refused": why or "no stdin, stdout and stderr"}).encode() + b"\n")
                conn.close()
                return
            inherited = [s.fileno() for s in self.sockets()] + [conn.fileno()]
            pid = os.fork()
            if pid == 0:
                _forked(inherited, lambda: _command(command, request, fds))
            if request.get("group"):  # here as well as in the child: before the stand-in can signal it
                with contextlib.suppress(OSError):
                    os.setpgid(pid, pid)
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            self.running[pid] = Running(None, conn)
        except (OSError, ValueError) as failed:
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"refused": str(failed)}).encode() + b"\n")
            conn.close()
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)

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
            readable, _, _ = select.select(watched, [], [], 0.02 if self.running else None)
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
