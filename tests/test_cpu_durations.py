"""`--cpu-durations=N` (helpers/cpu_durations.py) lists the tests by the CPU they spent, each charged what the
processes it started spent."""

from __future__ import annotations

import pytest

TESTS = """
import subprocess, sys

def test_starts_a_process():
    subprocess.run([sys.executable, "-c", "sum(range(10**6))"], check=True)

def test_starts_nothing():
    assert True
"""


def test_each_test_is_charged_the_processes_it_started(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_spending=TESTS)
    result = pytester.runpytest("-p", "helpers.cpu_durations", "--cpu-durations=5", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    rows = {line.split()[-1]: line.split() for line in result.outlines if "test_spending.py::" in line}
    total, own, started, forked, _ = rows["test_spending.py::test_starts_a_process"]
    assert float(started) > 0 and float(forked) == 0, rows
    assert float(total) == pytest.approx(float(own) + float(started), abs=0.011)
    assert float(rows["test_spending.py::test_starts_nothing"][2]) == 0, rows
    assert any(line.endswith("all 2 tests") for line in result.outlines), result.outlines


def test_without_the_option_nothing_is_listed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_spending=TESTS)
    result = pytester.runpytest("-p", "helpers.cpu_durations", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert not any("spent the most CPU" in line for line in result.outlines)
