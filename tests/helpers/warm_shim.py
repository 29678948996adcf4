"""A stand-in for ``python`` (or for a console script of the project) that has its command run by a warm
parent (helpers/warm_parent.py) instead of a fresh interpreter; helpers/warm_python.py writes copies of it
with REAL, SOCKET, PREFIX, ONLY and FORWARDED filled in, and runs them with ``python -I -S``, so it costs a
few milliseconds.

It hands the parent its command line, working directory, environment and its stdin, stdout and stderr (the
descriptors themselves) and the signals it was started ignoring (the command ignores them too), waits for
the process the parent forks, passes on every other signal it is sent that a process can catch (so a
runner's SIGINT reaches the command), and exits as the command did: with its code,
or killed by its signal. Killed itself (SIGKILL), it leaves nothing: the parent kills the command when this
process's end of the socket closes. Where the parent cannot run the command as a fresh interpreter would
(an option it does not know, another value of an environment variable its libraries read as they import) or
cannot be reached, this process becomes the real interpreter (``exec``), with the same arguments.
"""

import json
import os
import signal
import socket
import sys

REAL = "@REAL@"
SOCKET = "@SOCKET@"
PREFIX: list[str] = json.loads("@PREFIX@")
ONLY: list[list[str]] = json.loads("@ONLY@")
"""The command lines this stand-in hands the parent (none: every one); any other runs afresh."""
FORWARDED = [signal.Signals(number) for number in json.loads("@FORWARDED@")]
"""The signals passed on (warm_python.FORWARDED)."""
GROUP: bool = json.loads("@GROUP@")
"""Started as a process group's leader, this stand-in has its command lead a group of its own and passes each
signal to that whole group: for a caller that signals the group (a CI runner's timeout), which a fresh
interpreter's children (xdist's workers) are in. A stand-in cannot tell a signal sent to its group from one
sent to it alone, so only the caller that signals the group asks for this one."""


def fresh(why: str) -> None:
    """Become the real interpreter; why, in the note beside the socket (helpers/warm_runs.refusals)."""
    try:
        if why:
            with open(f"{SOCKET}.refused", "a") as notes:
                notes.write(f"{why}: {sys.argv[1:3]}\n")
    except OSError:
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    os.execv(REAL, [REAL, *PREFIX, *sys.argv[1:]])


def main() -> None:
    if ONLY and sys.argv[1:] not in ONLY:
        os.execv(REAL, [REAL, *PREFIX, *sys.argv[1:]])
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)  # held until they can be passed on, not lost
    ignored = [int(sig) for sig in FORWARDED if signal.getsignal(sig) == signal.SIG_IGN]  # nohup's SIGHUP, say
    group = GROUP and os.getpgrp() == os.getpid()
    request = {"argv": [*PREFIX, *sys.argv[1:]], "cwd": os.getcwd(), "env": dict(os.environ), "ignored": ignored,
               "group": group}  # fmt: skip
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(SOCKET)
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        replies = conn.makefile("rb")
        started = json.loads(replies.readline() or b"{}")
    except (OSError, ValueError) as failed:
        fresh(f"the warm parent could not be reached: {failed!r}")
    if "pid" not in started:
        fresh(str(started.get("refused", "the warm parent ended the connection")))
    pid = int(started["pid"])
    send = os.killpg if group else os.kill
    for sig in FORWARDED:
        if sig not in ignored:
            signal.signal(sig, lambda number, _frame: send(pid, number))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    line = replies.readline()  # a signal passed on does not cut the wait
    if not line:
        sys.stderr.write("the warm parent ended before the command did\n")
        sys.exit(1)
    ended = json.loads(line)
    code = int(ended["returncode"])
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


main()
