"""The warm parent the suite runs fork from (helpers/warm_parent.py): a forked run is the process a fresh
`python -m pytest` would be, in what it sees and in what it returns."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import warm_preload, warm_runs
from helpers.suite_runner import pytest_process

PROBE = """
import os, sys, signal

def test_sees_its_own_process():
    import helper_on_path  # from PYTHONPATH, as a fresh interpreter reads it
    print("cwd", os.getcwd())
    print("value", os.environ["WARM_PROBE"])
    print("path0", sys.path[0])
    print("sigint", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    print("to stderr", file=sys.stderr)
    from hypothesis.configuration import storage_directory  # where Hypothesis keeps its files: this cwd's
    print("hypothesis", storage_directory(intent_to_write=False).path)
    from hypothesis import settings  # its profile, from the environment as it imports: "ci" under CI=true
    print("profile", settings.get_current_profile_name())
    import weakref  # what runs at exit: the run's own finalizers, none its parent registered
    weakref.finalize(signal, print, "own finalizer ran at exit")
    print("exit finalizers", sorted(i.func.__qualname__ for i in weakref.finalize._registry.values() if i.atexit))
    assert os.environ["WARM_PROBE"] != "fail"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper_on_path.py").write_text("")
    return tmp_path


def _env(project: Path, value: str, **more: str) -> dict[str, str]:
    plain = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**plain, "WARM_PROBE": value, "PYTHONPATH": str(project / "lib"), **more}


def test_a_forked_run_has_its_own_cwd_environment_path_output_and_exit_code(project: Path) -> None:
    args = ["-p", "no:cacheprovider", "-s", "-q", "test_probe.py"]
    forked = warm_runs.run(args, project, _env(project, "one"), timeout=120)
    assert forked is not None, "the warm parent started"
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert f"cwd {project}" in forked.stdout and "value one" in forked.stdout
    assert f"path0 {project}" in forked.stdout and "sigint True" in forked.stdout
    assert "to stderr" in forked.stderr and "to stderr" not in forked.stdout
    assert "PytestAssertRewriteWarning" not in forked.stdout + forked.stderr, "no warning a fresh run lacks"
    assert f"hypothesis {project / '.hypothesis'}" in forked.stdout, "nothing preloaded kept the parent's cwd"
    assert "profile default" in forked.stdout
    in_ci = warm_runs.run(args, project, _env(project, "one", CI="true"), timeout=120)
    assert in_ci is not None and "profile ci" in in_ci.stdout, "Hypothesis's profile is the run's"
    again = warm_runs.run(args, project, _env(project, "fail"), timeout=120)
    assert again is not None and again.returncode == 1, "each run its own environment and exit code"
    fresh = subprocess.run(
        [sys.executable, "-m", "pytest", *args], cwd=project, env=_env(project, "fail"), capture_output=True,
        text=True,
    )  # fmt: skip
    assert fresh.returncode == again.returncode
    finalizers = [line for line in fresh.stdout.splitlines() if line.startswith("exit finalizers")]
    assert finalizers and finalizers[0] in again.stdout, "at exit, only the finalizers a fresh run has"
    assert "own finalizer ran at exit" in again.stdout and "own finalizer ran at exit" in fresh.stdout


READS_AT_IMPORT = {"environ", "getenv", "cwd", "getcwd", "gettempdir", "home", "expanduser", "getuid", "gethostname"}
"""What a module must not call (or index, for os.environ) as it imports: the parent's value would stay."""


class _ImportTimeReads(ast.NodeVisitor):
    """The calls and subscripts of READS_AT_IMPORT in the code that runs as a module imports: not in the
    bodies of its functions and lambdas, but in their defaults and decorators, and in class bodies."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for run in (*node.args.defaults, *filter(None, node.args.kw_defaults), *node.decorator_list):
            self.visit(run)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for run in (*node.args.defaults, *filter(None, node.args.kw_defaults)):
            self.visit(run)

    def _read(self, node: ast.Call | ast.Subscript, target: ast.expr) -> None:
        if READS_AT_IMPORT & set(ast.unparse(target).split(".")):
            self.found.append(f"line {node.lineno}: {ast.unparse(node)}")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self._read(node, node.func)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self._read(node, node.value)


def reads_at_import(source: str) -> list[str]:
    """Where ``source`` reads the environment, the working directory or the user as it imports."""
    visitor = _ImportTimeReads()
    visitor.visit(ast.parse(source))
    return visitor.found


def test_reads_at_import_finds_what_would_keep_the_parents_value() -> None:
    source = """
import os
HOME = os.environ.get("HOME")
class Settings:
    where = Path.cwd()
def f(env=os.getenv("X"), environ=os.environ):
    return os.environ["Y"], Path.cwd()
if HOME:
    TEMP = tempfile.gettempdir()
    later = lambda: os.environ["Z"]
"""
    assert reads_at_import(source) == [
        "line 3: os.environ.get('HOME')", "line 5: Path.cwd()", "line 6: os.getenv('X')",
        "line 9: tempfile.gettempdir()",
    ]  # fmt: skip


def test_no_preloaded_project_module_reads_the_environment_or_the_working_directory_as_it_imports() -> None:
    """The warm parent imports the project's modules once for every forked run: one that kept a value of the
    environment or the working directory from its import would keep the parent's, not the run's."""
    modules = warm_preload.project_modules()
    assert len(modules) > 100 and "mathcomp_tests.plugin" in modules
    assert not any(m.startswith(warm_preload.NOT_PRELOADED) for m in modules)
    found = {}
    for name in modules:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        if reads := reads_at_import(Path(spec.origin).read_text(encoding="utf-8")):
            found[name] = reads
    assert found == {}


def test_the_pytest_parts_the_warm_parent_preloads_read_nothing_of_the_run_as_they_import() -> None:
    found = {}
    for name in warm_preload.PYTEST_PARTS:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        if reads := reads_at_import(Path(spec.origin).read_text(encoding="utf-8")):
            found[name] = reads
    assert found == {}
    assert set(warm_preload.PYTEST_PARTS) <= set(warm_preload.PRELOADED)
    argcomplete = importlib.util.find_spec("_pytest._argcomplete")
    assert argcomplete is not None and argcomplete.origin is not None
    assert reads_at_import(Path(argcomplete.origin).read_text(encoding="utf-8")), "the check finds a read"


def test_a_forked_runs_xdist_workers_see_its_pythonpath(project: Path) -> None:
    """xdist sends its workers the sys.path it saw when it was imported: a preloaded xdist would send the
    parent's, and a plugin or module on the run's PYTHONPATH would be missing in the workers."""
    args = ["-p", "no:cacheprovider", "-q", "-n", "1", "test_probe.py"]
    forked = warm_runs.run(args, project, _env(project, "one"), timeout=120)
    assert forked is not None, "the warm parent started"
    assert forked.returncode == 0, forked.stdout + forked.stderr


def test_a_run_past_its_time_is_killed_and_said_as_subprocess_says_it(project: Path) -> None:
    (project / "test_slow.py").write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        pytest_process(["-p", "no:cacheprovider", "test_slow.py"], cwd=project, env=_env(project, "x"), timeout=3)


@pytest.mark.parametrize("argv", [["plan", "--framings", "neutral"], ["merge", "--no-such-option"]])
def test_a_forked_command_line_run_is_the_fresh_one(argv: list[str], tmp_path: Path) -> None:
    """`python -m mathcomp_tests ARGS` forked (module "mathcomp_tests") prints and exits as a fresh one."""
    env = os.environ.copy()
    forked = warm_runs.run(argv, tmp_path, env, timeout=120, module="mathcomp_tests")
    assert forked is not None, "the warm parent started"
    fresh = subprocess.run(
        [sys.executable, "-m", "mathcomp_tests", *argv], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)
    assert forked.args == [sys.executable, "-m", "mathcomp_tests", *argv]
    assert list(tmp_path.iterdir()) == []


def test_a_forked_run_with_pipes_writes_into_pipes_and_both_are_read(project: Path) -> None:
    (project / "test_pipes.py").write_text(
        "import os, stat, sys\n\ndef test_pipes():\n"
        "    print('stdout', stat.S_ISFIFO(os.fstat(1).st_mode), 'x' * 200_000)\n"
        "    print('stderr', stat.S_ISFIFO(os.fstat(2).st_mode), file=sys.stderr)\n"
    )
    args = ["-p", "no:cacheprovider", "-s", "-q", "test_pipes.py"]
    forked = warm_runs.run(args, project, _env(project, "one"), timeout=120, pipes=True)
    assert forked is not None, "the warm parent started"
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert "stdout True " + "x" * 200_000 in forked.stdout, "more than a pipe holds, read while written"
    assert "stderr True" in forked.stderr and "1 passed" in forked.stdout
