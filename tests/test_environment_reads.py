"""The secrets a run holds are read from the environment by whichever thread stores answers, while pytest
sets and removes PYTEST_CURRENT_TEST on the main thread around every test phase. A variable removed between
listing the names and reading its value raised KeyError in the cache writer, and the case errored (seen in
`make test` on a busy machine: `neutral-end-std-json ERROR: KeyError: 'PYTEST_CURRENT_TEST'`)."""

from __future__ import annotations

import types
from collections.abc import Iterator

import pytest

from mathcomp_tests.backends import secrets


class FakeEnviron(dict[str, str]):
    """A fake: an environment in which another thread removes a variable during the first read, which a
    test cannot make happen at a moment of its choosing with the real one."""

    reads = 0

    def items(self) -> Iterator[tuple[str, str]]:  # type: ignore[override]
        self.reads += 1
        for name in list(self):
            if self.reads == 1 and name == "PYTEST_CURRENT_TEST":
                raise KeyError(name)  # listed, then gone before its value was read
            yield name, self[name]


def test_a_variable_removed_while_the_environment_is_read_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    environ = FakeEnviron(PYTEST_CURRENT_TEST="t.py::x (call)", OPENAI_API_KEY="sk-" + "x" * 40)
    monkeypatch.setattr(secrets, "os", types.SimpleNamespace(environ=environ))
    assert ("sk-" + "x" * 40, "<OPENAI_API_KEY>") in secrets.held()  # beside what other tests held
    assert environ.reads == 2
