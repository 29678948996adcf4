"""What both providers' batch tests share: the check that a run answered every prompt, and two things done
to a run that waits on its batches: kill it with SIGKILL, or cancel its first batch from outside (as from
the provider's console) and let it finish."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from . import warm_runs
from .suite_runner import REPO, SuiteRun, run_suite


class BatchFake(Protocol):
    created: list[str]
    """Batch ids in the order the fake created them."""
    delay: float
    """Seconds from a batch's creation until the fake answers it."""
    batch_requests: list[str]
    """Each batch-API request the fake received, as ``METHOD path``."""


def all_answered(run: SuiteRun, prompts: int) -> None:
    """The run passed and recorded an answer (status ok) for each of its ``prompts`` prompts."""
    assert run.returncode == 0, run.output
    records = run.records
    assert len(records) == prompts and all(r["status"] == "ok" for r in records), run.output


START = 180.0
"""Seconds a run may take to create its first batch (a loaded machine starts pytest slowly)."""


def kill_while_waiting(server: BatchFake, workdir: Path, args: Sequence[str]) -> None:
    """Start the suite, wait until it created a batch and recorded it, then kill -9 it while it waits."""
    command = [warm_runs.python(), "-m", "pytest", "-p", "no:cacheprovider"]
    command += [f"--reports-dir={workdir / 'reports'}", f"--cache-dir={workdir / 'cache'}"]
    command += ["--deselect=mathcomp_tests/suite/test_generated.py", *args]
    with open(workdir / "killed.log", "wb") as log:
        proc = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    try:
        deadline = time.monotonic() + START
        while not server.created or not list((workdir / "cache" / "batches").glob("*.json")) or not _polled(server):
            assert proc.poll() is None, (workdir / "killed.log").read_text()
            assert time.monotonic() < deadline, "no batch was created and asked after"  # hang guard
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL


def _polled(server: BatchFake) -> bool:
    """Whether the run asked the fake for its first batch's status: it waits on the batch now."""
    first = server.created[0] if server.created else None
    return first is not None and any(r.startswith("GET ") and r.endswith(first) for r in list(server.batch_requests))


def cancel_mid_wait(
    server: BatchFake, workdir: Path, args: Sequence[str], cancel: Callable[[str], urllib.request.Request]
) -> SuiteRun:
    """Run the suite; once it created a batch, send the fake the request ``cancel`` makes for that batch,
    then make it answer later batches at once; the finished run."""
    got: list[SuiteRun] = []
    running = threading.Thread(target=lambda: got.append(run_suite(workdir, *args)))
    running.start()
    deadline = time.monotonic() + START
    while not server.created:
        assert running.is_alive() and time.monotonic() < deadline, "no batch was created"  # hang guard
        time.sleep(0.1)
    # Cancel before later batches answer at once: the other order lets a poll find the first batch
    # ended before the cancel lands, and the run never sees a cancelled batch.
    urllib.request.urlopen(cancel(server.created[0]), timeout=10).close()
    server.delay = 0
    running.join(300)
    (run,) = got
    return run
