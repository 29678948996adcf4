"""Run the MathComp suite the way a user does (a pytest subprocess) and read back what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    reports = workdir / "reports"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={reports}"]
    if not generated:
        examples = any(a.startswith("--generated") for a in args)
        command.append("--deselect=mathcomp_tests/suite/test_generated.py" if examples else "--generated=0")
    command += [f"--cache-dir={workdir / 'cache'}"] if cache else ["--no-cache"]
    proc = subprocess.run(
        [*command, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
    )
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, (reports / "latest").resolve())
