"""This test worker's side of helpers/warm_parent.py: start the warm parent once, hand it runs one at a time."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import warm_python

PARENT = Path(__file__).with_name("warm_parent.py")
ZYGOTE_SCRIPT = Path(__file__).with_name("warm_zygote.py")
SWITCH = warm_python.SWITCH
"""Set to 0 to start every suite run as a fresh interpreter (slower; the runs are the same)."""
ZYGOTE = "MATHCOMP_TESTS_ZYGOTE"
"""The socket of helpers/warm_zygote.py, set by the process that starts the xdist workers: their warm parents
are forked from it."""

ENVIRONMENT = dict(os.environ)
"""This worker's environment as its conftest.py left it, before any test changed it: the warm parent's, so
that what its libraries read as they import is the same whichever test happens to start it (a test that sets
HF_HOME, say, has its own runs and commands go afresh instead)."""
_lock = threading.Lock()
_parent: subprocess.Popen[bytes] | ForkedParent | None = None
_broken = False
_forked_cpu = 0.0
_folder: Path | None = None
"""The warm parent's scratch folder: its socket, and the stand-ins (helpers/warm_shim.py) that use it."""
_python: str | None = None
"""The running warm parent's stand-in for ``python`` (``python()``)."""
_group: str | None = None
"""The stand-in ``python(group=True)`` gives."""


def forked_cpu() -> float:
    """CPU seconds (user and system) the runs forked so far from this process's warm parent spent, those
    the stand-ins asked for included: they are the parent's children, not this process's, so
    `resource.RUSAGE_CHILDREN` here never sees them."""
    global _forked_cpu
    if _parent is not None and _parent.poll() is None and _lock.acquire(blocking=False):
        try:
            reply = _ask({"usage": True})
            _forked_cpu += float(reply.get("cpu", 0.0))
        finally:
            _lock.release()
    return _forked_cpu


def _ask(request: dict[str, Any]) -> dict[str, Any]:
    """One request to the running warm parent and its reply ({} when it is gone)."""
    assert _parent is not None and _parent.stdin is not None and _parent.stdout is not None
    try:
        _parent.stdin.write(json.dumps(request).encode() + b"\n")
        _parent.stdin.flush()
        return dict(json.loads(_parent.stdout.readline() or b"{}"))
    except (OSError, ValueError):
        return {}


def stand_ins(scripts: dict[str, list[str]]) -> dict[str, Path] | None:
    """Stand-ins for ``python`` and console scripts (name -> what goes before the arguments: [] for python,
    [the script's path] for a console script) that have the warm parent run their commands
    (helpers/warm_python.py); None where no warm parent runs, and the real ones are to be used."""
    with _lock:
        if _started() is None or _folder is None:
            return None
        folder = Path(tempfile.mkdtemp(prefix="shims-", dir=_folder))
        return warm_python.write_shims(folder, str(_folder / "socket"), scripts)


def refusals() -> str:
    """Why commands this worker handed its stand-ins ran afresh, a line each (empty: none did)."""
    notes = _folder / "socket.refused" if _folder is not None else None
    return notes.read_text() if notes is not None and notes.exists() else ""


def python(group: bool = False) -> str:
    """The interpreter to start a command with: the warm parent's stand-in for ``python`` (the command is
    forked from the parent, signals passed on: helpers/warm_shim.py), else this interpreter. With ``group``,
    for a command started as a process group's leader whose group will be signalled: the stand-in has the
    command lead a group of its own, with the processes it starts (xdist's workers), and passes each signal
    to that group."""
    with _lock:
        started = _started() is not None  # before reading the stand-ins' paths: it writes them
        shim = _group if group else _python
        return shim if started and shim is not None else sys.executable


def _started() -> subprocess.Popen[bytes] | ForkedParent | None:
    """The warm parent, started on first use (it imports for a few seconds); None where it cannot run."""
    global _parent, _broken, _folder, _python, _group
    if _parent is not None and _parent.poll() is None:
        return _parent
    if _broken or not hasattr(os, "fork") or os.environ.get(SWITCH) == "0":
        return None
    _folder = Path(tempfile.mkdtemp(prefix="mathcomp-warm-"))
    socket_path = str(_folder / "socket")
    _python = str(warm_python.write_shims(_folder, socket_path, {"python": []})["python"])
    group = Path(tempfile.mkdtemp(prefix="group-", dir=_folder))
    _group = str(warm_python.write_shims(group, socket_path, {"python": []}, group=True)["python"])
    # The forked runs' sys.executable: a stand-in that hands the warm parent the command an xdist worker starts
    # with (execnet's bootstrap) and starts any other afresh, as itself (a server's watchdog that watches its
    # parent, say); none where execnet is not installed.
    workers: list[str] = []
    with contextlib.suppress(ImportError):
        from execnet.gateway_io import popen_bootstrapline

        folder = Path(tempfile.mkdtemp(prefix="workers-", dir=_folder))
        only = [["-u", "-c", popen_bootstrapline]]
        workers.append(str(warm_python.write_shims(folder, socket_path, {"python": []}, only)["python"]))
    proc: subprocess.Popen[bytes] | ForkedParent | None = _from_zygote(socket_path, workers)
    if proc is None:
        proc = subprocess.Popen(
            [sys.executable, str(PARENT), socket_path, *workers],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENVIRONMENT,
        )  # fmt: skip
    assert proc.stdout is not None
    ready = json.loads(proc.stdout.readline() or b"{}")
    if ready.get("ready") is not True:
        proc.kill()
        _broken = True
        return None
    if isinstance(proc, ForkedParent):
        proc.attach(int(ready["pid"]))
    atexit.register(_stop, proc)
    _parent = proc
    return proc


def _stop(proc: subprocess.Popen[bytes] | ForkedParent) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)


class ForkedParent:
    """A warm parent helpers/warm_zygote.py forked for this worker: what of `subprocess.Popen` the worker uses
    (it is not this process's child: its end is seen through a pidfd)."""

    def __init__(self, stdin: int, stdout: int) -> None:
        self.stdin = open(stdin, "wb")  # noqa: SIM115 (closed by _stop: the parent then ends)
        self.stdout = open(stdout, "rb")  # noqa: SIM115
        self.pid = 0
        self.pidfd: int | None = None

    def attach(self, pid: int) -> None:
        """It said ready, with its pid: watch it from now on."""
        self.pid, self.pidfd = pid, os.pidfd_open(pid)

    def poll(self) -> int | None:
        """None while it runs (as Popen.poll), else 0: it ended."""
        if self.pidfd is None:
            return None
        return 0 if select.select([self.pidfd], [], [], 0)[0] else None

    def wait(self, timeout: float) -> int:
        if self.pidfd is not None and not select.select([self.pidfd], [], [], timeout)[0]:  # hang guard
            raise subprocess.TimeoutExpired("warm parent", timeout)
        return 0

    def kill(self) -> None:
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)


def start_zygote() -> None:
    """In the process that starts the xdist workers, before it starts them: helpers/warm_zygote.py, its
    socket in ZYGOTE for the workers' warm parents, and a stand-in that hands it the command xdist starts
    each worker with as this process's ``sys.executable`` (execnet starts workers with it); it ends as this
    process does. Nothing where no warm parent may run."""
    if not hasattr(os, "fork") or os.environ.get(SWITCH) == "0" or ZYGOTE in os.environ:
        return
    folder = Path(tempfile.mkdtemp(prefix="mathcomp-zygote-"))
    socket_path = str(folder / "socket")
    proc = subprocess.Popen(
        [sys.executable, str(ZYGOTE_SCRIPT), socket_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    atexit.register(_stop_zygote, proc, folder)
    assert proc.stdout is not None
    if json.loads(proc.stdout.readline() or b"{}").get("listening") is not True:
        return
    os.environ[ZYGOTE] = socket_path  # it imports now; who asks meanwhile waits
    with contextlib.suppress(ImportError):
        from execnet.gateway_io import popen_bootstrapline

        only = [["-u", "-c", popen_bootstrapline]]
        sys.executable = str(warm_python.write_shims(folder, socket_path, {"python": []}, only)["python"])


def _stop_zygote(proc: subprocess.Popen[bytes], folder: Path) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(60)  # hang guard: it waits for the workers' parents, which end with their workers
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(folder, ignore_errors=True)


def _from_zygote(socket_path: str, workers: list[str]) -> ForkedParent | None:
    """This worker's warm parent, forked by helpers/warm_zygote.py (ZYGOTE), waiting for its "ready"; None
    where there is none or it refused this worker (which then starts a parent of its own)."""
    path = os.environ.get(ZYGOTE)
    if not path:
        return None
    requests, replies = os.pipe(), os.pipe()
    ours, theirs = [requests[1], replies[0]], [requests[0], replies[1]]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(300)  # hang guard: it answers once it has imported (seconds)
            conn.connect(path)
            request = {"socket": socket_path, "workers": workers, "env": ENVIRONMENT}
            socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], theirs)
            answer = json.loads(conn.makefile("rb").readline() or b"{}")
    except (OSError, ValueError):
        answer = {}
    for fd in theirs:
        os.close(fd)
    if not answer.get("forked"):
        for fd in ours:
            os.close(fd)
        return None
    return ForkedParent(*ours)


def _drained(path: Path) -> Callable[[], str]:
    """A named pipe at ``path``, read to its end by a thread from now on; the returned call waits for the
    end (every writer closed it) and gives what was read."""
    os.mkfifo(path, 0o600)
    chunks: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as pipe:  # opens once the run opens it to write
            while chunk := pipe.read(65536):
                chunks.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()

    def ended() -> str:
        if thread.is_alive():
            with contextlib.suppress(OSError):  # a run that never opened it: open it once so the reader ends
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(60)  # hang guard: a process the run left behind may hold the pipe open
        return b"".join(chunks).decode(errors="replace")

    return ended


def run(
    args: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    terminal: str | None = None,
    module: str = "pytest",
    pipes: bool = False,
) -> subprocess.CompletedProcess[str] | None:
    """`python -m MODULE ARGS` (pytest by default) forked from the warm parent: its exit code, stdout and
    stderr; None when no warm parent is free (another thread's run holds it) or none can run, so the caller
    starts a fresh interpreter. What the preloaded libraries read from the environment as they import, they
    read from the worker's: a run that needs another value there (warm_python.READ_AT_IMPORT but
    APPLIED) sets MATHCOMP_TESTS_WARM=0 in its environment before the first run, or starts its own
    process. With ``terminal`` (a pseudo-terminal's path) the run's stdin, stdout and stderr are that
    terminal, and what it writes is read there, not returned. With ``pipes`` its stdout and stderr are pipes
    (named ones, read here while it writes), as `subprocess.run(capture_output=True)` gives them, not files."""
    global _broken, _forked_cpu
    if not _lock.acquire(blocking=False):
        return None
    try:
        parent = _started()
        if parent is None or parent.stdin is None or parent.stdout is None:
            return None
        with tempfile.TemporaryDirectory(prefix="mathcomp-run-") as scratch:
            out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
            readers = [_drained(path) for path in (out, err)] if pipes else []
            request = {"args": args, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err),
                       "timeout": timeout, "module": module}  # fmt: skip
            if terminal is not None:
                request.update(stdin=terminal, stdout=terminal, stderr=terminal)
            reply = _ask(request)
            read = [reader() for reader in readers]
            if not reply:
                _broken = True  # the parent died: every later run starts afresh
                return None
            command = [sys.executable, "-m", module, *args]
            _forked_cpu += float(reply.get("cpu", 0.0))
            if reply.get("timed_out"):
                raise subprocess.TimeoutExpired(command, timeout)
            if terminal is not None:
                return subprocess.CompletedProcess(command, int(reply["returncode"]), "", "")
            stdout, stderr = read or [out.read_text(errors="replace"), err.read_text(errors="replace")]
            return subprocess.CompletedProcess(command, int(reply["returncode"]), stdout, stderr)
    finally:
        _lock.release()


def process(
    module: str, args: list[str], cwd: Path, env: dict[str, str] | None, timeout: float, pipes: bool = False
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` in a process of its own, in ``cwd`` with ``env`` (this process's environment
    when None): forked from the warm parent where one is free (``run``), else a fresh interpreter; its exit
    code, stdout and stderr (pipes, as a fresh one writes into, with ``pipes``). ``subprocess.TimeoutExpired``
    when it runs past ``timeout`` (it is killed)."""
    environ = dict(os.environ if env is None else env)
    forked = run(args, cwd, environ, timeout, module=module, pipes=pipes)
    if forked is not None:
        return forked
    command = [sys.executable, "-m", module, *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environ)
