"""No test decides on the clock: a test that passes on an idle machine passes on a loaded or a faster one.

Two things make a test's outcome depend on how fast the machine is, and both are looked for in every
module under tests/:
- an upper bound on a time: a clock reading (``time.monotonic()``, ``time.time()``, ``perf_counter()``) or a
  name bound to one, compared as the smaller side (``took < 6``, ``time.monotonic() - started < 30``,
  ``time.monotonic() < deadline``);
- a sleep standing in for "the other side has not got there yet" (``time.sleep(1.0)`` before a signal or
  a check): a sleep outside a ``while`` loop that polls for the event itself.
A deadline that only guards against a hang stays, and says so on its line (``# hang guard``); a sleep that
plays a peer's slowness (a fake server's latency, a stuck child) says ``# slow peer``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ALLOWED = ("# hang guard", "# slow peer")
CLOCK = r"(?:time\.(?:monotonic|time|perf_counter)\(\)|\bmonotonic\(\)|\bperf_counter\(\))"
BOUND_FROM_CLOCK = re.compile(rf"^\s*(\w+)(?:\s*,\s*\w+)*\s*=\s*.*{CLOCK}")


def _clock_names(source: str) -> set[str]:
    """Names a module binds to a clock reading or to something computed from one."""
    names: set[str] = set()
    for line in source.splitlines():
        found = BOUND_FROM_CLOCK.match(line)
        if found:
            names.add(found.group(1))
    return names


def _time_term(names: set[str]) -> str:
    shown = "|".join(sorted(map(re.escape, names)))
    return rf"(?:{CLOCK}(?:\s*-\s*[\w.\[\]()]+)?|\b(?:{shown})\b(?:\s*-\s*[\w.\[\]()]+)?)" if names else CLOCK


def upper_bounds_on_time(source: str) -> list[tuple[int, str]]:
    """(line number, line) of each comparison that caps a time and says no reason."""
    term = _time_term(_clock_names(source))
    capped = re.compile(rf"{term}\s*<=?\s*[^<=]|[^>=]\s*>=?\s*{term}")
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if "<<" in code or not capped.search(code) or line.rstrip().endswith(ALLOWED):
            continue
        if any(marker in line for marker in ALLOWED):
            continue
        found.append((number, line.strip()))
    return found


def _is_sleep(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name == "sleep"


def sleeps_outside_polls(source: str) -> list[tuple[int, str]]:
    """(line number, line) of each sleep that is not a ``while`` loop's poll interval and says no reason."""
    tree = ast.parse(source)
    lines = source.splitlines()
    polled: set[int] = set()
    for loop in ast.walk(tree):
        if isinstance(loop, ast.While):
            polled |= {id(node) for node in ast.walk(loop)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_sleep(node) and id(node) not in polled:
            line = lines[node.lineno - 1]
            if not any(marker in line for marker in ALLOWED):
                found.append((node.lineno, line.strip()))
    return found


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if p.name != Path(__file__).name)


def _found(check: Callable[[str], list[tuple[int, str]]]) -> str:
    return "\n".join(f"{p.relative_to(TESTS)}:{n}: {line}" for p in _modules() for n, line in check(p.read_text()))


def test_no_test_caps_a_duration_without_saying_it_is_a_hang_guard() -> None:
    found = _found(upper_bounds_on_time)
    assert not found, f"times capped (count events, wait for the event, or mark a hang guard):\n{found}"


def test_no_test_sleeps_in_place_of_waiting_for_the_other_side() -> None:
    found = _found(sleeps_outside_polls)
    assert not found, f"sleeps that poll nothing (wait for the event itself, or mark a slow peer):\n{found}"


def test_the_checks_find_what_they_look_for() -> None:
    """Each pattern of the old tests is found; a hang guard, a poll and a lower bound are not."""
    old = (
        "import time\n"
        "started = time.monotonic()\n"
        "took = time.monotonic() - started\n"
        "assert took < 6, took\n"
        "assert time.monotonic() - started < 30\n"
        "ended = time.time()\n"
        "assert 3 <= ended - last < 33\n"
        "time.sleep(1.0)  # the controller waits for their collections\n"
    )
    assert [n for n, _ in upper_bounds_on_time(old)] == [4, 5, 7]
    assert [n for n, _ in sleeps_outside_polls(old)] == [8]
    kept = (
        "import time\n"
        "deadline = time.monotonic() + 120\n"
        "while not done():\n"
        "    assert time.monotonic() < deadline  # hang guard\n"
        "    time.sleep(0.05)\n"
        "took = time.monotonic() - started\n"
        "assert took >= 1.0, 'Retry-After was honoured'\n"
        "time.sleep(600)  # slow peer: a child that never answers\n"
    )
    assert upper_bounds_on_time(kept) == [] and sleeps_outside_polls(kept) == []
