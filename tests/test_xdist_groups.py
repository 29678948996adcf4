"""The project's tests lean on ``--dist=loadgroup`` (make test): the tests that share one vLLM server or one
trained LoRA carry ``xdist_group`` so that one worker runs them all and starts or trains it once. pytest 9.2
with pytest-xdist 3.8 drops the mark without a word (pytest-dev/pytest-xdist#1386): each worker then starts a
server of its own. constraints.txt pins a pytest that keeps the groups; this test says when they are lost."""

from __future__ import annotations

import json

import pytest

GROUPED = """
import json, os, pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    with open(os.environ["SEEN"], "a") as out:
        out.write(json.dumps([__name__, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
"""


def test_tests_of_one_xdist_group_run_on_one_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_first=GROUPED, test_second=GROUPED)
    seen = pytester.path / "seen.jsonl"
    monkeypatch.setenv("SEEN", str(seen))
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "--dist=loadgroup", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8)
    runs = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(runs) == 8
    assert len({worker for _, worker in runs}) == 1, f"the group was split across workers: {sorted(runs)}"


def test_every_test_that_asks_for_the_sessions_openai_server_is_in_its_group() -> None:
    """`openai_server` (tests/conftest.py) is a session fixture: each worker that runs a test asking for it
    starts a `transformers serve` of its own, so every such test carries the group ``openai-server``."""
    import ast
    from pathlib import Path

    users = []
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "openai_server" for a in node.args.args):
                marks = [ast.unparse(d) for d in node.decorator_list]
                users.append((path.name, node.name, "pytest.mark.xdist_group('openai-server')" in marks))
    assert len(users) >= 2, users
    assert [u for u in users if not u[2]] == []
