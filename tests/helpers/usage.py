"""How a test checks that a bad input stopped the suite, and runs the `mathcomp` command in process."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from mathcomp_tests.cli import main

from .suite_runner import SuiteRun


def assert_usage_error(run: SuiteRun, expected: str) -> None:
    """Exit 4, one ERROR line holding ``expected``, no traceback, no case run."""
    assert run.returncode == 4, run.output
    errors = [line for line in run.output.splitlines() if "ERROR:" in line]
    assert len(errors) == 1, run.output
    assert expected in errors[0], run.output
    assert "Traceback" not in run.output and "INTERNALERROR" not in run.output, run.output
    assert not re.search(r"\d+ (passed|failed|error)", run.output), run.output


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
