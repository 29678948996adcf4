"""Run the MathComp suite the way a user does (a pytest subprocess) and read back what it wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import warm_runs

REPO = Path(__file__).resolve().parents[2]
IN_PROCESS = ("-p", "mathcomp_tests.pytest_plugin", "--pyargs", "mathcomp_tests.suite")
"""The arguments that select the installed suite for ``pytester.runpytest_inprocess`` (from its own folder),
where what is checked is the plugin's wiring, not a user's process."""


@dataclass
class SuiteRun:
    returncode: int
    output: str
    run_dir: Path
    """This run's folder (reports/latest as it was when the run ended)."""

    @property
    def summary(self) -> dict[str, Any]:
        return dict(json.loads((self.run_dir / "summary.json").read_text()))

    @property
    def records(self) -> list[dict[str, Any]]:
        lines = (self.run_dir / "results.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines]

    def case(self, case_id: str) -> dict[str, Any]:
        return next(c for c in self.summary["cases"] if c["case"] == case_id)

    @property
    def table(self) -> list[str]:
        """The end-of-run table's lines, from its heading to ``run folder:`` (pytest's failure messages,
        printed whole in its short summary when CI is set, can start with a case id too)."""
        lines = self.output.split("MathComp directional error", 1)[1].splitlines()[1:]
        return lines[: next(i for i, line in enumerate(lines) if line.startswith("run folder: ")) + 1]

    def table_row(self, case_id: str) -> str:
        """The table's one row for ``case_id``."""
        (row,) = [line for line in self.table if line.startswith(case_id + " ")]
        return row


def run_suite(
    workdir: Path, *args: str, cache: bool = True, timeout: float = 600, generated: bool = False
) -> SuiteRun:
    """`pytest <args>` from the repository root, with reports and cache under ``workdir``.

    Without ``generated``, test_generated is left out (``--generated=0``; deselected where ``args`` set
    --generated for test_metamorphic): most checks here count the fixed set's prompts.
    """
    if cache:
        share_checked(workdir / "cache" / "checked", into_run=True)
    proc = pytest_process(suite_args(workdir, *args, cache=cache, generated=generated), timeout=timeout)
    if cache:
        share_checked(workdir / "cache" / "checked", into_run=False)
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, (workdir / "reports" / "latest").resolve())


def suite_args(workdir: Path, *args: str, cache: bool = True, generated: bool = False) -> list[str]:
    """run_suite's pytest arguments: ``args`` after the reports and cache folders under ``workdir``."""
    command = ["-p", "no:cacheprovider", f"--reports-dir={workdir / 'reports'}"]
    if not generated:
        examples = any(a.startswith("--generated") for a in args)
        command.append("--deselect=mathcomp_tests/suite/test_generated.py" if examples else "--generated=0")
    command += [f"--cache-dir={workdir / 'cache'}"] if cache else ["--no-cache"]
    return [*command, *args]


def pytest_process(
    args: list[str],
    *,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    pipes: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`python -m pytest ARGS` in a process of its own, in ``cwd`` (the repository root) with ``env`` (this
    process's environment): its exit code, stdout and stderr. The process is forked from this worker's warm
    parent (helpers/warm_parent.py) where one is running and free, else started afresh (warm_runs.process);
    ``subprocess.TimeoutExpired`` when it runs past ``timeout`` (it is killed)."""
    return warm_runs.process("pytest", args, cwd, env, timeout, pipes=pipes)


def share_checked(folder: Path, *, into_run: bool) -> None:
    """Copy checked-dataset entries between a run's cache and the test session's shared folder.

    Verifying a dataset with sympy costs a suite run seconds, and each test's run has a cache of its own.
    An entry is named by its file's sha256 and a digest of the verifier's code, and a damaged one is
    ignored and rebuilt, so one made by any run serves all. A run's folder gets the entries before it
    starts (``into_run``), unless it has its own already; the shared folder takes the new ones after.
    Tests of the checked cache itself call ``data.checked`` directly, not through here.
    """
    shared = os.environ.get("MATHCOMP_TESTS_SHARED")
    if not shared:
        return
    source, target = (Path(shared) / "checked", folder) if into_run else (folder, Path(shared) / "checked")
    if not source.is_dir() or (into_run and target.exists()):
        return
    target.mkdir(parents=True, exist_ok=True)
    for entry in source.glob("*.json"):
        if not (target / entry.name).exists():
            partial = target / f".{entry.name}.{os.getpid()}.part"
            shutil.copyfile(entry, partial)
            os.replace(partial, target / entry.name)
