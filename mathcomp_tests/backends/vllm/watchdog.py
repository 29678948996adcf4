"""Run a command and end its whole process group when the process that started this one ends.

    python watchdog.py PARENT_PID -- command [args...]

Started in a session of its own, this script runs ``command`` in its process group and watches its
parent: when the parent is gone (ended, crashed, killed with -9: this process is then re-parented),
or this script is sent SIGTERM, SIGINT or SIGHUP, it sends SIGTERM to the group, waits, then SIGKILL to
whatever is left. A vLLM server's engine processes outlive a killed API server otherwise. When the
command exits by itself, what it left in the group is ended too, and the command's exit status is this
script's. Runs by path, with the standard library only: nothing of the package is imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL_SECONDS = 0.2
GRACE_SECONDS = 15.0
"""How long the group has to end after SIGTERM before it is killed."""


def members(group: int) -> list[int]:
    """Process ids in ``group`` other than this one (from /proc; empty where there is no /proc)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and int(entry.name) != os.getpid() and state != "Z":
            found.append(int(entry.name))
    return found


def end_group(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group, a grace period, then SIGKILL to what is left (this process last)."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    group = os.getpgrp()
    os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        child.poll()
        if child.returncode is not None and not members(group):
            return
        time.sleep(POLL_SECONDS)
    os.killpg(group, signal.SIGKILL)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    parent = int(argv[1])
    stop: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, frame: stop.append(number))
    if os.getppid() != parent:
        return 1  # the parent ended before we got here
    child = subprocess.Popen(argv[3:])
    while True:
        code = child.poll()
        if code is not None:
            end_group(child)  # what the command left behind
            return code
        if stop or os.getppid() != parent:
            end_group(child)
            return 0
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
