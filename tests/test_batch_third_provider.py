"""A new batch provider is one module plus one line of ``PROVIDERS`` (mathcomp_tests/backends/batch/__init__.py).

FakeCo (tests/helpers/fakeco_batches.py) is a FAKE third provider, registered by that one line
(``REGISTRY_LINE``, added with monkeypatch); tests/test_batch_contract.py runs the whole batch contract
against it, end to end on its fake server, beside OpenAI and Anthropic. Here: the registry imports a
provider only when a run uses it, names each as ``module:Class`` (each class a ``BatchProvider``, which mypy
checks below), and is what the batch backend asks; and no shared module of backends/batch/ speaks a
provider's words (imports a provider's module, branches on a provider's name, or names OpenAI's input file).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.fakeco_batches import NAME, REGISTRY_LINE, FakeCoBatches

from mathcomp_tests.backends.base import BackendError
from mathcomp_tests.backends.batch import PROVIDERS, provider
from mathcomp_tests.backends.batch.anthropic import AnthropicBatches
from mathcomp_tests.backends.batch.backend import BatchBackend
from mathcomp_tests.backends.batch.openai import OpenAIBatches
from mathcomp_tests.backends.batch.protocol import BatchProvider
from mathcomp_tests.settings import BackendOptions, BatchOptions

BATCH = Path(__file__).resolve().parents[1] / "mathcomp_tests" / "backends" / "batch"
HELPERS = Path(__file__).resolve().parent / "helpers"
CHECKED: tuple[BatchProvider, ...] = (OpenAIBatches, AnthropicBatches, FakeCoBatches)
"""Each provider class as a BatchProvider: mypy refuses one that does not make a BatchAPI."""


def test_the_registry_imports_a_provider_only_when_a_run_uses_it() -> None:
    """Like backends.REGISTRY: the batch backend imports no provider module; ``provider`` imports the one
    asked for, and only it."""
    code = (
        "import sys\n"
        "import mathcomp_tests.backends.batch.backend\n"
        "from mathcomp_tests.backends.batch import PROVIDERS, provider\n"
        "mods = {n: t.split(':')[0] for n, t in PROVIDERS.items()}\n"
        "print(sorted(n for n, m in mods.items() if m in sys.modules))\n"
        "provider('anthropic')\n"
        "print(sorted(n for n, m in mods.items() if m in sys.modules))\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["[]", "['anthropic']"], done.stdout


def test_each_provider_is_named_as_module_and_class() -> None:
    assert PROVIDERS == {
        "openai": "mathcomp_tests.backends.batch.openai:OpenAIBatches",
        "anthropic": "mathcomp_tests.backends.batch.anthropic:AnthropicBatches",
    }
    assert provider("openai") is OpenAIBatches and provider("anthropic") is AnthropicBatches
    with pytest.raises(BackendError, match="no batch provider 'fakeco'; known: openai, anthropic"):
        provider(NAME)


def test_one_registry_line_makes_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDERS, *REGISTRY_LINE)
    assert provider(NAME) is FakeCoBatches


def test_the_batch_backend_takes_the_providers_the_registry_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider the registry does not name is refused by --batch, which says the ones it names; one it
    names passes that check (FakeCo then fails the live path's own, which no litellm provider does: the
    batch backend holds the live backend for the probe, the cache identity and --batch-fallback=live)."""
    options = BackendOptions(batch=BatchOptions(tmp_path / "responses.sqlite"))
    with pytest.raises(BackendError) as refused:
        BatchBackend("fakeco/gpt-4o-mini", options)
    said = str(refused.value)
    assert (
        "--batch takes a model of a provider whose batch API is wired (openai/<name>, anthropic/<name>"
        in said
    )
    monkeypatch.setitem(PROVIDERS, *REGISTRY_LINE)
    with pytest.raises(BackendError) as live:
        BatchBackend("fakeco/gpt-4o-mini", options)
    assert "is not a model string litellm can route" in str(live.value), live.value


def _words(path: Path, names: set[str]) -> list[str]:
    """Where ``path`` imports a provider module, compares with a provider's name, or names `input_file_id`."""
    modules = {target.split(":")[0] for target in PROVIDERS.values()}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom):
            imported = (
                {f"mathcomp_tests.backends.batch.{a.name}" for a in node.names} if node.level else set()
            )
            imported.add(("mathcomp_tests.backends.batch." if node.level else "") + (node.module or ""))
            found += [f"{line}: imports {m}" for m in sorted(imported & modules)]
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            found += [
                f"{line}: compares with {s.value!r}"
                for s in sides
                if isinstance(s, ast.Constant) and s.value in names
            ]
        elif isinstance(node, (ast.Name, ast.Attribute, ast.arg)):
            word = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else node.arg
            )
            if word == "input_file_id":
                found.append(f"{line}: names input_file_id")
    return found


def test_no_shared_batch_module_speaks_a_provider_s_words() -> None:
    """Only a provider's own module knows its words: the shared modules (protocol, encoding, submissions,
    runner, backend, ...) and FakeCo's module import no provider module, branch on no provider's name,
    and name no `input_file_id` (submissions.py reads an earlier version's key as text, not as a name)."""
    own = {BATCH / f"{target.split(':')[0].rsplit('.', 1)[1]}.py" for target in PROVIDERS.values()}
    shared = [p for p in sorted(BATCH.glob("*.py")) if p not in own]
    assert len(shared) >= 7, shared
    found = [w for path in [*shared, HELPERS / "fakeco_batches.py"] for w in _words(path, {*PROVIDERS, NAME})]
    assert found == [], found
