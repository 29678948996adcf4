"""Each piece of code has one home, named for its job: no module over 400 lines, one definition of a shared
constant, and code that serves several callers lives below them all, not in one caller's module.

Read from the source with ``ast`` (as tests/test_import_layers.py does), so the checks cost nothing to run.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mathcomp_tests"
MOST_LINES = 400


@cache
def _sources() -> dict[str, ast.Module]:
    """Every module's syntax tree, by its path under the package (read when a test first asks)."""
    return {
        path.relative_to(PACKAGE).as_posix(): ast.parse(path.read_text(encoding="utf-8"), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }



def _imported(tree: ast.Module) -> set[tuple[str, str]]:
    """(module as written after its dots, name) of every ``from ... import name`` in ``tree``."""
    return {
        (node.module or "", alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_no_module_is_over_400_lines() -> None:
    long = {
        name: n
        for name in _sources()
        if (n := len((PACKAGE / name).read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not long, f"modules over {MOST_LINES} lines (split them by job): {long}"


def test_a_module_level_constant_has_one_definition() -> None:
    """The same constant (by name, a leading underscore aside, and value) assigned in two modules is one
    value kept twice: the day one copy changes, the other disagrees."""
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, tree in _sources().items():
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id.lstrip("_")
                if target.isupper() and isinstance(node.value, ast.Constant):
                    where[(target, ast.unparse(node.value))].append(name)
    twice = {f"{k} = {v}": files for (k, v), files in where.items() if len(files) > 1}
    assert not twice, f"constants defined in more than one module: {twice}"


def test_the_weights_identity_is_not_taken_from_the_transformers_backend() -> None:
    """A model folder's fingerprint and where its weights lie serve the run's identity and vLLM as much as
    the hf backend: they live in a module of their own, and neither imports hf.py for them."""
    for name in ("backends/identity.py", "backends/vllm/engine.py"):
        found = {module for module, _ in _imported(_sources()[name])}
        hf = [module for module in found if module == "hf" or module.endswith(".hf")]
        assert not hf, f"{name} imports backends/local/hf.py"


def test_redact_is_imported_from_its_home_not_through_the_backend_protocol() -> None:
    """backends/secrets.py holds every secret and the one redaction; the report and the plugin take it
    from there, and backends/base.py (the backend protocol) does not pass it on."""
    through_base = sorted(
        name
        for name, tree in _sources().items()
        if any(n == "redact" and m.endswith("base") for m, n in _imported(tree))
    )
    assert not through_base, f"redact imported through backends/base.py: {through_base}"


def test_backends_holds_no_function_only_the_command_line_calls() -> None:
    """Command code (what `mathcomp cache` does) lives in cli/; a function of backends/ that nothing but
    cli/ names is command code in the wrong room."""
    used: dict[str, set[str]] = defaultdict(set)
    for name, tree in _sources().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                used[node.id].add(name)
            elif isinstance(node, ast.Attribute):
                used[node.attr].add(name)
            elif isinstance(node, ast.alias):
                used[node.name].add(name)
    command_only = sorted(
        f"{name}: {node.name}"
        for name, tree in _sources().items()
        if name.startswith("backends/")
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        and (users := used[node.name] - {name})
        and all(u.startswith("cli/") for u in users)
    )  # fmt: skip
    assert not command_only, f"functions of backends/ that only cli/ calls: {command_only}"


COMMAND_ROOMS = ("history", "keep", "record", "site")
"""Commands whose code is a room of its own, named as the command; cli/<command>.py is the entry point."""


def test_each_command_has_a_room_named_as_the_command_and_record_means_one_thing() -> None:
    """`mathcomp history`, `keep`, `record` and `site` each have their entry point, cli/<command>.py, and a
    room, <command>/, that the entry point imports. "records" are the per-item answer records (records/);
    a kept night's files are a "night", a batch's saved state a "submission": no other module or folder has
    "record" in its name but the command's own room, record/, and its entry point."""
    for command in COMMAND_ROOMS:
        assert f"{command}/__init__.py" in _sources(), f"`mathcomp {command}` has no room {command}/"
        imported = {module.split(".")[0] for module, _ in _imported(_sources()[f"cli/{command}.py"])}
        assert command in imported, f"cli/{command}.py imports nothing of {command}/: its code lives elsewhere"
    named = sorted(
        name
        for name in _sources()
        if any("record" in part for part in name.removesuffix(".py").split("/"))
        and name.split("/")[0] not in ("records", "record")
        and name != "cli/record.py"
    )
    assert not named, f"'record' in the name of a module outside records/ and record/: {named}"
