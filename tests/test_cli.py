"""`mathcomp`: one command, a subcommand per job; `python -m mathcomp_tests COMMAND` is the same command.

The entry points themselves run as subprocesses; what a subcommand does with its arguments is called in
process (`main([...])`), with real files: run folders the suite wrote, sqlite caches, damaged copies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from importlib import import_module
from pathlib import Path

import pytest
from helpers.shared_runs import TwoFormats
from helpers.suite_runner import REPO, SuiteRun, pytest_process
from helpers.usage import call

from mathcomp_tests import run_folder
from mathcomp_tests.backends.cache.store import ResponseCache, Row
from mathcomp_tests.cli import main
from mathcomp_tests.records import results
from mathcomp_tests.types import Response

SUBCOMMANDS = ("init", "audit", "generate", "answers", "report", "merge", "diff", "history", "record", "site",
               "keep", "cache", "plan", "prepare")  # fmt: skip
CONSOLE_SCRIPT = "import sys; from mathcomp_tests.cli import main; sys.exit(main())"
"""What the `mathcomp` console script runs (it exists once the package is installed)."""


def python(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """This checkout's package, whatever the working directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MATHCOMP_")}
    env["PYTHONPATH"] = str(REPO)
    env["COLUMNS"] = "80"
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


# The command and its help


def test_mathcomp_help_lists_every_subcommand_with_one_line() -> None:
    proc = python("-c", CONSOLE_SCRIPT, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: mathcomp ")
    listed = proc.stdout.split("\ncommands:\n  COMMAND\n", 1)[1].rstrip("\n").splitlines()
    assert [line.split()[0] for line in listed] == list(SUBCOMMANDS), "one line each, in 80 columns"
    assert all(len(line.split()) >= 4 for line in listed)


@pytest.mark.parametrize(
    "argv", [[s] for s in SUBCOMMANDS] + [["cache", "stats"], ["cache", "prune"], ["cache", "clear"]]
)
def test_every_subcommand_has_its_own_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, _ = call(capsys, *argv, "--help")
    assert code == 0
    assert out.startswith(f"usage: mathcomp {' '.join(argv)}")


def test_the_console_script_is_declared_and_points_at_the_dispatcher() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"mathcomp": "mathcomp_tests.cli:main"}
    module, _, name = project["scripts"]["mathcomp"].partition(":")
    assert getattr(import_module(module), name) is main


def test_a_missing_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys)
    assert code == 2 and "usage: mathcomp" in err


# `python -m mathcomp_tests COMMAND`: the one command without the console script

OLD_SPELLINGS = ("answers", "audit", "cache", "generate", "history", "report")
"""Modules that once ran one subcommand alone (`python -m mathcomp_tests.cache`); gone for the one command."""


@pytest.mark.parametrize("argv", [[s] for s in SUBCOMMANDS] + [["cache", "stats"]])
def test_python_dash_m_runs_every_subcommand(argv: list[str]) -> None:
    proc = python("-m", "mathcomp_tests", *argv, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: python -m mathcomp_tests {' '.join(argv)}")


@pytest.mark.parametrize("name", OLD_SPELLINGS)
def test_the_old_one_subcommand_spellings_are_gone(name: str) -> None:
    package = REPO / "mathcomp_tests"
    assert not (package / f"{name}.py").exists() and not (package / name / "__main__.py").exists()
    proc = python("-m", f"mathcomp_tests.{name}", "--help")
    # exit 1, nothing printed; the message differs where an editable install of another checkout
    # still holds the old file ("No module named ..." in this checkout alone)
    assert proc.returncode == 1 and proc.stdout == "", proc.stdout


def test_python_dash_m_mathcomp_tests_is_the_whole_command() -> None:
    proc = python("-m", "mathcomp_tests", "--help")
    assert proc.returncode == 0, proc.stderr
    assert all(re.search(rf"^\s+{name}\s", proc.stdout, re.M) for name in SUBCOMMANDS)


def test_argument_parsing_lives_in_the_cli_package_only() -> None:
    package = REPO / "mathcomp_tests"
    parsing = [
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "argparse" in p.read_text() and p.parent.name != "cli"
    ]
    assert parsing == []
    entry = package / "__main__.py"
    code = [line for line in entry.read_text().split('"""')[-1].splitlines() if line.strip()]
    assert len(code) <= 3 and "cli" in code[0], entry


# Defect: options after the cache subcommand were refused


def make_cache(folder: Path, entries: int = 3) -> Path:
    """A real response cache with ``entries`` answers of the symbolic model."""
    cache = ResponseCache(folder / "responses.sqlite")
    now = time.time()
    cache.put_many(
        [Row(f"k{i}", "symbolic", "1", Response(f"answer {i} " * 40), now) for i in range(entries)]
    )
    cache.close()
    return folder / "responses.sqlite"


def test_cache_options_are_taken_after_the_subcommand(tmp_path: Path) -> None:
    db = make_cache(tmp_path / "c")
    proc = python("-m", "mathcomp_tests", "cache", "stats", f"--cache-dir={db.parent}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{db}: 3 entries")
    proc = python("-m", "mathcomp_tests", "cache", "clear", "--model", "symbolic", "--cache-dir", str(db.parent))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"removed 3 entries from {db}"


def test_cache_options_before_the_subcommand_still_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = make_cache(tmp_path / "c", entries=2)
    code, out, _ = call(capsys, "cache", f"--cache-dir={db.parent}", "prune", "--older-than", "0")
    assert code == 0 and out.strip() == f"removed 2 entries from {db}"
    code, _, err = call(capsys, "cache", "prune", "--older-than", "-1", f"--cache-dir={db.parent}")
    assert code == 2 and "--older-than" in err


# Defect: the cache command looked in the working directory, the suite at the pytest rootdir


def test_the_cache_command_finds_the_cache_where_the_suite_wrote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "their-repo"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    run = python(
        "-m", "pytest", "-p", "mathcomp_tests.pytest_plugin", "--pyargs", "mathcomp_tests.suite.test_framing",
        "--model=symbolic", "--limit=2", "--framings=neutral", "--positions=end",
        cwd=project / "src" / "deep",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    db = project / ".mathcomp-cache" / "responses.sqlite"
    assert db.is_file(), "the suite's cache is at its rootdir"

    monkeypatch.delenv("MATHCOMP_CACHE_DIR", raising=False)
    monkeypatch.chdir(project / "src" / "deep")
    code, out, err = call(capsys, "cache", "stats")
    assert code == 0, err
    assert out.startswith(f"{db}: 2 entries")


LAYOUTS = {
    "pytest.ini above": {"pytest.ini": "[pytest]\n"},
    "a pytest table beats a nearer plain setup.cfg": {
        "pyproject.toml": "[tool.pytest.ini_options]\n",
        "a/setup.cfg": "[metadata]\nname = x\n",
    },
    "a nearer setup.cfg with [tool:pytest]": {
        "pyproject.toml": "[tool.pytest.ini_options]\n",
        "a/setup.cfg": "[tool:pytest]\n",
    },
    "a nearer tox.ini with [pytest]": {"pyproject.toml": "[tool.pytest]\n", "a/b/tox.ini": "[pytest]\n"},
    "an empty [tool.pytest] table does not count": {
        "pyproject.toml": "[tool.pytest.ini_options]\n",
        "a/pyproject.toml": "[tool.pytest]\n",
    },
    "a plain pyproject.toml": {"pyproject.toml": "[project]\nname = 'x'\n", "a/tox.ini": "[tox]\n"},
    "setup.py": {"setup.py": "", "a/tox.ini": "[tox]\n"},
    "nothing": {},
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_rootdir_is_the_one_pytest_finds(tmp_path: Path, layout: str) -> None:
    from mathcomp_tests.rootdir import rootdir

    top = tmp_path / "top"
    start = top / "a" / "b"
    start.mkdir(parents=True)
    for rel, text in LAYOUTS[layout].items():
        (top / rel).write_text(text)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    header = pytest_process(["--collect-only", "-p", "no:cacheprovider"], cwd=start, env=env, timeout=120).stdout
    (found,) = re.findall(r"^rootdir: (.+?)(?:, configfile: .*)?$", header, re.M)
    assert rootdir(start) == Path(found)


# Defect: a damaged responses.sqlite ended in a traceback


def test_a_file_of_random_bytes_is_not_called_a_cache_nor_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Random bytes carry no mark of the suite: they could be anyone's file, so nothing deletes them."""
    db = make_cache(tmp_path / "c", entries=400)
    noise = os.urandom(db.stat().st_size)
    db.write_bytes(noise)
    for action in ("stats", "clear"):
        code, out, err = call(capsys, "cache", f"--cache-dir={db.parent}", action)
        assert code == 1 and out == ""
        assert one_line(err) == (
            f"error: {db} is not an sqlite database, so not a cache this suite wrote; left as it is: move it "
            "away, or give --cache-dir a folder of its own"
        )
    assert db.read_bytes() == noise


@pytest.mark.parametrize("damage", ["truncated", "truncated further"])
def test_a_damaged_cache_is_one_line_and_clear_removes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    db = make_cache(tmp_path / "c", entries=400)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[: len(data) // 8])
    where = f"--cache-dir={db.parent}"

    code, out, err = call(capsys, "cache", where, "stats")
    line = one_line(err)
    assert code == 1 and out == ""
    assert line.startswith(f"error: {db} is damaged (") and f"cache clear --cache-dir={db.parent}" in line
    assert call(capsys, "cache", where, "prune", "--older-than", "1")[0] == 1
    code, _, err = call(capsys, "cache", where, "clear", "--model", "symbolic")
    assert code == 1 and "without --model" in one_line(err) and db.exists(), "one model cannot be picked out"

    code, out, err = call(capsys, "cache", where, "clear")
    assert code == 0, err
    assert one_line(out) == f"removed the damaged cache {db}"
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith("responses.sqlite")) in (
        [],
        ["responses.sqlite.lock"],
    )
    code, _, err = call(capsys, "cache", where, "stats")
    assert code == 2 and "no cache at" in err
    make_cache(db.parent, entries=1)
    assert call(capsys, "cache", where, "stats")[1].startswith(f"{db}: 1 entries"), "a new cache opens there"


# Defect: init wrote a workflow for a model the suite cannot resolve


def test_init_refuses_a_model_the_suite_would_not_know(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, "init", str(tmp_path), "--model=nonsense")
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith("mathcomp init: error: --model=nonsense: unknown model 'nonsense'.")
    assert "Known aliases:" in line
    assert list(tmp_path.iterdir()) == [], "nothing written"
    assert call(capsys, "init", str(tmp_path), "--model=symbolic")[0] == 0


# Defects: report and history on damaged run folders, and -o where nothing can be written


pytestmark = pytest.mark.xdist_group("cli")
"""One worker runs this module's tests, so its module-scoped fixtures (`finished_run`) are built once."""


@pytest.fixture(scope="module")
def finished_run(two_formats: TwoFormats) -> SuiteRun:
    """The session's symbolic run under one-word (tests/conftest.py), read only: each test damages a copy."""
    run = two_formats.one_word
    assert run.returncode == 0, run.output
    return run


def copy_run(run: SuiteRun, reports: Path) -> Path:
    """A copy of the run's folder as the only run in ``reports``."""
    return Path(shutil.copytree(run.run_dir, reports / run.run_dir.name))


def test_a_cut_last_line_of_results_is_dropped_and_said(
    finished_run: SuiteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "reports")
    path = run_dir / results.RESULTS
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed while writing

    code, out, err = call(capsys, "report", str(run_dir))
    assert code == 0, err
    assert one_line(err) == (
        f"warning: {path}: line {len(lines)} is cut short (the run was stopped while writing it); "
        f"dropped, the {len(lines) - 1} records before it kept"
    )
    assert out.strip() == f"wrote {run_dir / 'report-rebuilt.html'}"
    kept = run_folder.read(run_dir / run_folder.RESULTS, strict=False)
    assert len(kept.records) == len(lines) - 1 and kept.note is not None
    assert kept.records == [json.loads(x) for x in lines[:-1]]

    code, out, err = call(capsys, "history", str(run_dir.parent))
    assert code == 0, err
    assert finished_run.summary["run_id"] in out


def test_a_damaged_line_inside_results_is_an_error_naming_it(
    finished_run: SuiteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "reports")
    path = run_dir / results.RESULTS
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = '{"case": "neutral-begin\n'
    path.write_text("".join(lines))
    code, _, err = call(capsys, "report", str(run_dir))
    assert code == 1
    assert one_line(err).startswith(f"error: {path}: line 2 is not a JSON record (")


def test_a_summary_without_its_model_is_one_line_for_report_and_history(
    finished_run: SuiteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "reports")
    summary = json.loads((run_dir / results.SUMMARY).read_text())
    del summary["model"]
    (run_dir / results.SUMMARY).write_text(json.dumps(summary))
    expected = f"error: {run_dir / results.SUMMARY}: no 'model'; expected the summary.json a suite run writes"
    for argv in (["report", str(run_dir)], ["history", str(run_dir.parent)]):
        code, out, err = call(capsys, *argv)
        assert (code, out, one_line(err)) == (1, "", expected)
    (run_dir / results.SUMMARY).write_text("[1, 2]")
    code, _, err = call(capsys, "report", str(run_dir))
    assert code == 1 and one_line(err).endswith(
        "not a JSON object; expected the summary.json a suite run writes"
    )


def test_report_output_on_a_directory_is_a_usage_error(
    finished_run: SuiteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "reports")
    for command, target in (("report", run_dir), ("history", run_dir.parent)):
        code, out, err = call(capsys, command, str(target), "-o", str(tmp_path))
        assert code == 2 and out == ""
        assert (
            one_line(err)
            == f"mathcomp {command}: error: -o {tmp_path}: a directory; expected a file to write"
        )


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in: a mode 555 one, or, for root, /sys."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, Path("/sys")):
        try:
            (candidate / "probe").write_text("")
        except OSError:
            return candidate
        (candidate / "probe").unlink()
    pytest.skip("no folder here refuses writes")


def test_report_output_where_nothing_can_be_written_is_one_line(
    finished_run: SuiteRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run(finished_run, tmp_path / "reports")
    target = _read_only_folder(tmp_path) / "report.html"
    for command, source in (("report", run_dir), ("history", run_dir.parent)):
        code, _, err = call(capsys, command, str(source), "-o", str(target))
        assert code == 1
        assert one_line(err).startswith(f"error: cannot write {target}: ")
    assert not target.exists()
