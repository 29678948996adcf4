"""The package's imports flow one way: no cycle between modules or packages, nothing imports a layer
above its own, and every import of the project's own code names a module that exists.

Read from the source with ``ast`` (imports inside functions and under TYPE_CHECKING count too), so the
check costs nothing to run and holds whatever is imported lazily. docs/design.md draws the same layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mathcomp_tests"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "types", "paths", "suite_selection", "rootdir", "tomltext", "printable", "finite", "userfile", "owncheck",
        "listing", "summary_format", "run_folder",
    ),  # fmt: skip
    ("settings", "config"),
    ("data", "reading"),
    ("scoring",),
    ("formats",),
    ("prompts",),
    ("backends",),
    ("protocols", "baseline_file"),
    ("verdict",),
    ("records",),
    ("report",),
    ("history", "record"),
    ("site", "keep"),
    ("run",),
    ("merge",),
    ("plugin", "cli", "init", "starter", "suite", "pytest_plugin", "__main__"),
)
"""Bottom to top. A module may import its own layer's modules (without a cycle) and any layer below.
A module belongs to its top-level name's layer, whatever its own name: no exception for entry points."""


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def from_imports(name: str, path: Path) -> Iterator[tuple[ast.ImportFrom, str]]:
    """(the statement, the module it names, dots resolved) for every ``from <the project's module> import``
    in ``path``, the module ``name``."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] == "mathcomp_tests":
                yield node, target


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    """(line, module) for every import of the project's own code in ``path``."""
    for statement, target in from_imports(name, path):
        for alias in statement.names:
            full = f"{target}.{alias.name}"
            yield statement.lineno, full if full in known else target
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "mathcomp_tests":
                    yield node.lineno, alias.name


def top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(module: str) -> int:
    name = top(module)
    for n, names in enumerate(LAYERS):
        if name in names:
            return n
    raise AssertionError(f"{module}: its top-level name {name!r} is in no layer of LAYERS; add it")


@cache
def _known() -> dict[str, Path]:
    """The project's modules (read when a test first asks, not as the module is collected)."""
    return modules()


@cache
def _edges() -> dict[str, set[tuple[int, str]]]:
    """Each module's imports of the project's own modules, (line, module)."""
    known = _known()
    return {
        name: {(line, target) for line, target in imports(name, path, known) if target != name}
        for name, path in known.items()
    }


def test_every_import_of_the_project_names_a_module_that_exists() -> None:
    missing = [
        f"{_known()[name].relative_to(PACKAGE.parent)}:{line}: {target}"
        for name, edges in _edges().items()
        for line, target in edges
        if target not in _known() and target != "mathcomp_tests"
    ]
    assert not missing, "imports of modules that do not exist:\n" + "\n".join(sorted(missing))


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{_known()[name].relative_to(PACKAGE.parent)}:{line}: {top(name)} imports {target} ({top(target)})"
        for name, edges in _edges().items()
        if top(name) != "__init__"
        for line, target in edges
        if target in _known() and top(target) != "__init__" and layer(target) > layer(name)
    ]
    assert not upward, "upward imports:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("level", ["module", "package"])
def test_no_import_cycles(level: str) -> None:
    graph: dict[str, set[str]] = {}
    for name, edges in _edges().items():
        for _, target in edges:
            if target not in _known() or target == "mathcomp_tests":
                continue
            a, b = (name, target) if level == "module" else (top(name), top(target))
            if a != b:
                graph.setdefault(a, set()).add(b)
    assert not _cycles(graph), f"{level} import cycles: {_cycles(graph)}"


def family(module: str) -> str | None:
    """The sub-package of a package a module lies in (``backends.chat``); None for a package's own modules."""
    parts = module.split(".")
    package = _known().get(".".join(parts[:3])) if len(parts) >= 4 else None
    if package is None or package.name != "__init__.py":
        return None
    return ".".join(parts[1:3])


BACKEND_ROOMS = {f"backends.{room}" for room in ("chat", "completions", "local", "vllm", "cache", "batch")}
"""backends/'s rooms, one per family of backend (chat: litellm; completions: raw /v1/completions)."""


def test_no_import_cycles_between_the_families_of_a_package() -> None:
    """backends/ is in rooms (chat, completions, local, vllm, cache, batch): no two rooms import each other,
    directly or round about (a room may use its package's own modules and any room it does not lead back to)."""
    graph: dict[str, set[str]] = {}
    for name, edges in _edges().items():
        for _, target in edges:
            a, b = family(name), family(target) if target in _known() else None
            if a and b and a != b:
                graph.setdefault(a, set()).add(b)
    assert {family(name) for name in _known() if top(name) == "backends"} - {None} == BACKEND_ROOMS
    assert {"backends.completions", "backends.local"} <= set(graph) | {b for bs in graph.values() for b in bs}
    assert not _cycles(graph), f"cycles between sub-packages: {_cycles(graph)}"


def through_the_root(edges: dict[str, set[tuple[int, str]]]) -> dict[str, set[str]]:
    """The import graph with each room one node and each of its package's own modules (backends/models.py)
    a node of its own."""

    def node(module: str) -> str:
        return family(module) or module.removeprefix("mathcomp_tests.")

    graph: dict[str, set[str]] = {}
    for name, found in edges.items():
        for _, target in found:
            a, b = node(name), node(target)
            if top(name) == top(target) and a != b:
                graph.setdefault(a, set()).add(b)
    return graph


def test_no_room_leads_back_to_itself_through_its_package() -> None:
    """A package's own modules (backends/model_files.py, models.py, weights.py, ...) lie below its rooms:
    what a room takes from them leads back into no room that reaches them. local/hf.py -> model_files.py ->
    local/weights.py ran back up. Besides, of the root only the ask-ahead wrapper imports a room (the cache's
    store it wraps)."""
    graph = through_the_root(_edges())
    assert not _cycles(graph), f"rooms reached back through their package's modules: {_cycles(graph)}"
    root = {name for name in graph if name.startswith("backends.") and name not in BACKEND_ROOMS}
    into_rooms = {(a, b) for a in root for b in graph[a] if b in BACKEND_ROOMS}
    assert into_rooms <= {("backends.ahead", "backends.cache")}, f"root modules of backends/ import rooms: {into_rooms}"


def test_the_room_check_finds_a_room_reached_back_through_its_package() -> None:
    """local/hf.py -> model_files.py -> local/weights.py (as the code once was) is a cycle of the room."""
    edges = {
        "mathcomp_tests.backends.local.hf": {(1, "mathcomp_tests.backends.model_files")},
        "mathcomp_tests.backends.model_files": {(1, "mathcomp_tests.backends.local.weights")},
    }
    assert _cycles(through_the_root(edges)) == [["backends.local", "backends.model_files"]]


def test_the_check_finds_a_cycle_and_an_upward_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert layer("mathcomp_tests.report.html") > layer("mathcomp_tests.records.items")
    assert layer("mathcomp_tests.settings") < layer("mathcomp_tests.run")
    assert top("mathcomp_tests.report.__main__") == "report", "an entry point inside a package is that package"


def test_the_run_page_and_the_history_pages_are_rooms_of_their_own() -> None:
    """report/ is the run page; the history pages are history/'s (`mathcomp history`), a layer above: history/
    takes the run page's shared pieces (sections, charts, the page around a body), and report/ takes
    nothing of history/, of the site or of a command's room (record/, keep/)."""
    assert layer("mathcomp_tests.history.page") > layer("mathcomp_tests.report.charts")
    assert not [name for name in _known() if top(name) == "report" and "history" in name.rsplit(".", 1)[-1]]
    from_history = {top(target) for _, target in room_imports("history")}
    assert "report" in from_history and not from_history & {"site", "keep", "record"}, from_history
    upward = [f"{n} imports {t}" for n, t in room_imports("report") if top(t) in ("history", "site", "record", "keep")]
    assert not upward, upward


def imported_names(name: str, path: Path) -> Iterator[tuple[str, str]]:
    """(module, name) for every ``from <the project's module> import name`` in ``path``."""
    for node, target in from_imports(name, path):
        yield from ((target, alias.name) for alias in node.names)


def room_imports(room: str) -> list[tuple[str, str]]:
    """(module, what it imports) for every import of the project's own code by the modules of ``room``."""
    found = [(name, target) for name, edges in _edges().items() if top(name) == room for _, target in edges]
    assert found, f"no module of {room}/ imports anything: is {room}/ still a room?"
    return sorted(found)


MODEL_ROOMS = ("backends", "protocols")
"""Where a model is called: the backends, and the protocols (the judge, protocols/judge.py, asks one)."""


def test_the_statistics_import_neither_the_baseline_file_nor_the_configuration_nor_a_model() -> None:
    """scoring/ is the statistics: pure computation on answers already read. The ceilings, limits and base
    answers it works on are handed in by its caller, so it imports nothing of baseline_file/ (the baseline
    file's format), config/ (thresholds.toml) or a room that calls a model, whatever LAYERS allows."""
    found = [
        f"{name} imports {target}"
        for name, target in room_imports("scoring")
        if top(target) in ("baseline_file", "config", *MODEL_ROOMS)
    ]
    assert not found, "the statistics reach outside their room:\n" + "\n".join(found)
    assert not any(top(name) == "scoring" and name.endswith(".judge") for name in _known()), "the judge calls a model"


def test_the_configuration_imports_nothing_but_the_bottom_layer() -> None:
    """config/ reads thresholds.toml into plain data: besides its own modules it imports layer 0 only, so no
    statistics, no baseline file and no backend. Which model a [model.*] section names is resolved by its
    caller (backends/models.py ``named``, handed to ``thresholds.load``), never through the filesystem here."""
    found = [
        f"{name} imports {target}"
        for name, target in room_imports("config")
        if top(target) != "config" and target != "mathcomp_tests" and layer(target) != 0
    ]
    assert not found, "the configuration imports more than layer 0:\n" + "\n".join(found)


RUN_HOLDERS = ("run", "plugin", "pytest_plugin")
"""Who may hold the Run (run/orchestrator.py): run/ itself, and the plugin, which builds it and asks the
suite's cases with it. What is written about a run takes its plain facts (run/facts.py); the suite, fixtures."""


def imports_run(name: str, path: Path) -> bool:
    """Whether the module ``name`` (at ``path``) imports the Run from run/, or reaches it as an attribute."""
    by_name = any(what == "Run" and top(target) == "run" for target, what in imported_names(name, path))
    tree = ast.parse(path.read_text(), str(path))
    return by_name or any(isinstance(node, ast.Attribute) and node.attr == "Run" for node in ast.walk(tree))


def test_no_module_imports_the_run_but_the_run_and_the_plugin(tmp_path: Path) -> None:
    """summary.json, shard.json, the merge and the suite's tests are written over what the run hands back once
    (run/facts.py RunFacts; the plugin's fixtures), not over the Run and everything it loads and asks."""
    found = sorted(name for name, path in _known().items() if top(name) not in RUN_HOLDERS and imports_run(name, path))
    assert not found, f"modules that import the Run, outside run/ and the plugin: {found}"
    once = tmp_path / "rebuild.py"
    once.write_text("from ..run import PARTNERS, REVEAL_AFTER, Run\n")  # merge/rebuild.py's MergedRun(Run), once
    assert imports_run("mathcomp_tests.merge.rebuild", once)
    once.write_text("from mathcomp_tests.run import Run\n")  # the suite's type hint of its fixture, once
    assert imports_run("mathcomp_tests.suite.test_invariance", once)


def test_the_baseline_file_takes_only_its_precision_from_the_statistics_and_resolves_no_model() -> None:
    """baseline_file/ imports one statistics module, scoring/precision.py (the thousandths probabilities are
    kept and compared at), nothing of config/, and of the backends only how a model name that looks like a
    path is written: it keeps the model a baseline names as written, and the run resolves it
    (backends/models.py ``recorded``)."""
    imported = room_imports("baseline_file")
    assert {t for _, t in imported if top(t) == "scoring"} == {"mathcomp_tests.scoring.precision"}, imported
    assert not [t for _, t in imported if top(t) == "config"], imported
    from_models = {
        (name, target, what)
        for name, path in _known().items()
        if top(name) == "baseline_file"
        for target, what in imported_names(name, path)
        if top(target) in MODEL_ROOMS
    }
    assert {(t, what) for _, t, what in from_models} == {("mathcomp_tests.backends.models", "looks_like_path")}, (
        from_models
    )
