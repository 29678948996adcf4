"""What the installed plugin costs a project that does not use it: ``.venv/bin/python -m benchmarks.plugin_startup``.

Builds the wheel, makes two virtualenvs with the same dependencies (see tests/helpers/wheel_env.py), one with the
wheel installed and one without, and times ``python -m pytest`` on an unrelated test file in each,
interleaved, ``--runs`` times. Also times the import of what the entry point loads,
``mathcomp_tests.pytest_plugin``, and of the full plugin a suite run loads (``-X importtime``).
Prints a table and writes ``reports/benchmarks/plugin_startup.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "reports" / "benchmarks"
sys.path.insert(0, str(ROOT / "tests"))

from helpers.wheel_env import build_wheel, clean_env, isolated_venv  # noqa: E402

UNRELATED = "\n".join(
    ["import pytest", ""]
    + [f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n" for i in range(20)]
    + [
        "@pytest.mark.parametrize('condition', range(10))",
        "def test_param(condition):",
        "    assert condition < 10",
    ]
)
"""Someone else's tests: plain functions, and a parameter named like the suite's."""


def time_pytest(python: Path, project: Path) -> float:
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_unrelated.py"]
    env = {**clean_env(), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or "30 passed" not in proc.stdout:
        raise RuntimeError(f"the unrelated tests did not pass under {python}:\n{proc.stdout}{proc.stderr}")
    return elapsed


def import_ms(python: Path, project: Path, module: str) -> float:
    """Cumulative import time of ``module``, pytest already imported (the fastest of 7: least noise)."""
    times = []
    for _ in range(7):
        proc = subprocess.run(
            [str(python), "-X", "importtime", "-c", f"import pytest; import {module}"],
            cwd=project,
            env=clean_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(x for x in proc.stderr.splitlines() if x.rstrip().endswith(f"| {module}"))
        times.append(int(line.split("|")[1]) / 1000)
    return min(times)


def collect_s(repeat: int = 3) -> dict[str, Any]:
    """Collection of the full matrix (every framing, identity and format) from this checkout, fastest of
    ``repeat`` after one warm-up, and how many cases it collected."""
    from benchmarks.common import pytest_command, run_tracked

    command = pytest_command(
        "--model=symbolic", "--framings=all", "--identities=all", "--formats=all", "--collect-only"
    )
    run_tracked(command)
    runs = [run_tracked(command) for _ in range(repeat)]
    return {"seconds_min": min(r.seconds for r in runs), "pytest_says": runs[-1].last_line()}


def stats(samples: list[float]) -> dict[str, float]:
    return {
        "median_s": round(statistics.median(samples), 4),
        "mean_s": round(statistics.fmean(samples), 4),
        "min_s": round(min(samples), 4),
        "stdev_s": round(statistics.stdev(samples), 4) if len(samples) > 1 else 0.0,
    }


def run(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="mathcomp-startup-") as tmp:
        base = Path(tmp)
        wheel = build_wheel(base / "wheel")
        with_plugin = isolated_venv(base / "with", wheel)
        without = isolated_venv(base / "without")
        project = base / "project"
        project.mkdir()
        (project / "test_unrelated.py").write_text(UNRELATED)
        time_pytest(with_plugin, project), time_pytest(without, project)  # warm the OS file cache
        samples: dict[str, list[float]] = {"without": [], "with": []}
        for _ in range(runs):
            samples["without"].append(time_pytest(without, project))
            samples["with"].append(time_pytest(with_plugin, project))
        written = sorted(p.name for p in project.iterdir())
        entry_ms = import_ms(with_plugin, project, "mathcomp_tests.pytest_plugin")
        full_ms = import_ms(with_plugin, project, "mathcomp_tests.plugin")
    result: dict[str, Any] = {
        "benchmark": "plugin_startup",
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.processor() or 'unknown cpu'}",
        "runs": runs,
        "unrelated_tests": 30,
        "without_plugin": stats(samples["without"]),
        "with_plugin": stats(samples["with"]),
        "median_difference_s": round(
            statistics.median(samples["with"]) - statistics.median(samples["without"]), 4
        ),
        "entry_point_import_ms": round(entry_ms, 1),
        "suite_plugin_import_ms": round(full_ms, 1),
        "files_in_project_after_runs": written,
        "collect_full_matrix": collect_s(),
    }
    return result


def markdown(result: dict[str, Any]) -> str:
    rows = [
        "| pytest on 30 unrelated tests | median s | mean s | min s | stdev s |",
        "|---|---|---|---|---|",
    ]
    for key, label in (("without_plugin", "without mathcomp-tests"), ("with_plugin", "with mathcomp-tests")):
        s = result[key]
        rows.append(f"| {label} | {s['median_s']} | {s['mean_s']} | {s['min_s']} | {s['stdev_s']} |")
    return "\n".join(
        [
            f"# Plugin start-up cost ({result['runs']} interleaved runs, Python {result['python']})",
            "",
            *rows,
            "",
            f"- median difference: {result['median_difference_s'] * 1000:.0f} ms",
            "- import, pytest already imported (fastest of 7): what every session loads, "
            f"`mathcomp_tests.pytest_plugin`, {result['entry_point_import_ms']} ms; what a suite run adds, "
            f"`mathcomp_tests.plugin`, {result['suite_plugin_import_ms']} ms",
            f"- collecting the full matrix (`--framings=all --identities=all --formats=all --collect-only`, "
            f"fastest of 3): {result['collect_full_matrix']['seconds_min']} s "
            f"({result['collect_full_matrix']['pytest_says']})",
            f"- files in the project after the runs: {', '.join(result['files_in_project_after_runs'])}",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=15, help="timed runs per environment (default: %(default)s)"
    )
    args = parser.parse_args()
    from benchmarks.common import load

    before = load()
    result = run(args.runs)
    result.update(load_before=before, load_after=load())
    text = markdown(result)
    print(text)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "plugin_startup.json").write_text(json.dumps(result, indent=2) + "\n")
    (OUT_DIR / "plugin_startup.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
