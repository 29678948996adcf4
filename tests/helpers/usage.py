"""How a test checks that a bad input stopped the suite, runs such a suite in process (refused), and runs the
`mathcomp` command in process."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mathcomp_tests.cli import main

from .suite_runner import REPO, SuiteRun, share_checked, suite_args


def assert_usage_error(run: SuiteRun, expected: str) -> None:
    """Exit 4, one ERROR line holding ``expected``, no traceback, no case run."""
    assert run.returncode == 4, run.output
    errors = [line for line in run.output.splitlines() if "ERROR:" in line]
    assert len(errors) == 1, run.output
    assert expected in errors[0], run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    assert not re.search(r"\d+ (passed|failed|error)", run.output), run.output


LIBRARIES = ("torch", "transformers", "litellm")
"""What a refused run must not import. pytester takes every module a test imported out of sys.modules when
the test ends, and torch cannot be imported twice in one process (its second import crashes it); these
also cost seconds and start threads. The runs here are refused before any model loads."""


def refused(
    pytester: pytest.Pytester, workdir: Path, *args: str, cache: bool = True, generated: bool = False
) -> SuiteRun:
    """``run_suite(workdir, *args)`` in this process (``pytester.runpytest_inprocess``), from the repository
    root with the same arguments, for a run that stops on a usage error before any case: the same exit code
    and output, without a process to start.

    The run imports mathcomp_tests afresh: no module, class or module-level value of this process's copy
    reaches it, and none of its own outlive it (pytester takes them out of sys.modules again). It must leave
    this process as it found it (threads, signal handlers, environment, logging, working folder; pytest puts
    warning filters back after each test) and import none of LIBRARIES: a run that does either fails here,
    and belongs in run_suite (a process of its own)."""
    if cache:
        share_checked(workdir / "cache" / "checked", into_run=True)
    before = _process_state()
    imported: list[str] = []

    class Libraries:
        @staticmethod
        def pytest_unconfigure() -> None:
            imported.extend(
                name for name in LIBRARIES if name in sys.modules and name not in before["modules"]
            )

    project = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "mathcomp_tests"}
    try:
        for name in project:  # the run imports the package afresh, as a process of its own does
            del sys.modules[name]
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(REPO)
            # Compiled and assertion-rewritten modules kept where the suite's processes keep them
            # (tests/conftest.py), even when this process was started without bytecode on disk.
            patch.setattr(sys, "dont_write_bytecode", False)
            patch.setattr(sys, "pycache_prefix", os.environ.get("PYTHONPYCACHEPREFIX", sys.pycache_prefix))
            command = suite_args(workdir, *args, cache=cache, generated=generated)
            result = pytester.runpytest_inprocess(*command, plugins=[Libraries()])
    finally:
        sys.modules.update(project)
    if cache:
        share_checked(workdir / "cache" / "checked", into_run=False)
    output = "\n".join([*result.outlines, *result.errlines])
    assert not imported, f"the run imported {imported}: run it with run_suite\n{output}"
    for thread in set(threading.enumerate()) - before["threads"]:
        thread.join(5)
    after = _process_state()
    changed = {key: (before[key], after[key]) for key in before if after[key] != before[key]}
    assert not changed, f"the run changed this process (before, after): {changed}\n{output}"
    return SuiteRun(int(result.ret), output, (workdir / "reports" / "latest").resolve())


def _process_state() -> dict[str, Any]:
    return {
        "threads": {t for t in threading.enumerate() if t.is_alive()},
        "signals": {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)},
        "environ": dict(os.environ),
        "logging": (logging.root.level, list(logging.root.handlers)),
        "modules": {name for name in LIBRARIES if name in sys.modules},
        "cwd": os.getcwd(),
    }


def mathcomp(*argv: str | Path) -> tuple[int, str, str]:
    """``mathcomp ARGV`` in process without pytest's capture (for a fixture): exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``mathcomp ARGV`` in process: exit status, stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    return code, out.out, out.err
