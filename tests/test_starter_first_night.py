"""The starter gates from its first night: `mathcomp init` installs the extra the model needs, keeps run
folders and the cache out of the repository (appending to a .gitignore it finds), and its baseline recipe and
workflow step, run as written, compare every case, the generated ones included, with the base's answers.
(The workflow installed [hf] for an API model, whose first run stopped with exit 4; the baseline recipe
copied summary.json and results.jsonl, and no step passed --baseline: the generated cases were never gated.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.fake_ci import FakeCI, Step

from mathcomp_tests import init, summary_format

SMALL = "--limit=6 --generated=3 --framings=neutral,direct-more --positions=end -p no:cacheprovider"
"""Keeps the starter's runs short (PYTEST_ADDOPTS: the commands themselves run as written)."""


def _step(root: Path, name: str) -> str:
    workflow = yaml.safe_load((root / ".github/workflows/mathcomp.yml").read_text())
    return next(s["run"] for s in workflow["jobs"]["framing-bias"]["steps"] if s.get("name") == name)


@pytest.mark.parametrize(
    ("model", "extra"), [("gpt-4o-mini", "api"), ("hf:./my-finetune", "hf"), ("vllm:./my-finetune", "all")]
)
def test_the_workflow_installs_the_extra_the_model_needs(tmp_path: Path, model: str, extra: str) -> None:
    init.init(tmp_path, model)
    text = (tmp_path / ".github/workflows/mathcomp.yml").read_text()
    assert f'pip install "mathcomp-tests[{extra}]=={init.installed_version()}"' in text
    assert "is released on PyPI this line fails" in text  # and what to do until then


def test_a_gitignore_of_theirs_is_appended_to_not_replaced(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc\nreports/")
    written = init.init(tmp_path, "symbolic")
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["*.pyc", "reports/"] and lines.count("reports/") == 1 and ".mathcomp-cache/" in lines
    assert tmp_path / ".gitignore" in written
    assert init.init(tmp_path, "symbolic", force=True)[-1] != tmp_path / ".gitignore"  # nothing left to add


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _checkout(origin: Path, into: Path) -> Path:
    """A fresh checkout of the remote's main, as actions/checkout makes it."""
    _git("clone", "--quiet", "--branch", "main", str(origin), str(into))
    return into


def _night(tmp_path: Path, origin: Path, night: int) -> tuple[list[Step], Path]:
    """One CI run of the starter's job, in a checkout of the remote's main, its cache carried from the run
    before: the steps, and the checkout it ran in."""
    checkout = _checkout(origin, tmp_path / f"checkout-{night}")
    context = {"github.run_id": str(night), "github.run_attempt": "1", "github.event_name": "push"}
    ci = FakeCI(
        checkout / ".github/workflows/mathcomp.yml", checkout, tmp_path / "ci-cache",
        tmp_path / f"night-{night}" / "artifacts", context,
    )  # fmt: skip
    return ci.run("framing-bias", {"PYTEST_ADDOPTS": SMALL}), checkout


def test_the_first_night_gates_against_the_baseline_the_recipe_makes(tmp_path: Path) -> None:
    """`mathcomp init` in an empty repository pushed to a bare remote; its workflow's job run by the fake CI
    in a fresh checkout each night: the first night gates by the ceilings alone; the team makes the baseline
    by the recipe the starter wrote and pushes it; the next night compares every case, the generated ones
    included, with it, and the history kept in the CI's cache shows both nights."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git("init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    _git("init", "--quiet", "--initial-branch=main", str(work))
    init.init(work, "symbolic")
    for command in (
        ("add", "-A"),
        ("commit", "--quiet", "-m", "mathcomp init"),
        ("push", "--quiet", str(origin), "main"),
    ):
        _git("-c", "user.name=t", "-c", "user.email=t@example.com", *command, cwd=work)
    first, checkout = _night(tmp_path, origin, 1)
    ran = {s.name: s for s in first}
    assert ran["Run the suite"].returncode == 0, ran["Run the suite"].output[-3000:]
    assert "against the baseline" not in ran["Run the suite"].output, "none committed yet: the ceilings gate"
    assert ran["Keep this run's record and plot the history"].returncode == 0
    env = {
        **os.environ,
        "PYTEST_ADDOPTS": SMALL,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    recipe = re.search(r"```bash\n(pytest [^\n]+)\n", (checkout / "mathcomp-baseline/README.md").read_text())
    assert recipe is not None
    made = subprocess.run(["bash", "-c", recipe.group(1).replace("<the base model>", "symbolic")], cwd=checkout,
                          env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert (checkout / "mathcomp-baseline/baseline.txt").is_file(), made.stdout[-2000:]
    for command in (
        ("add", "mathcomp-baseline/baseline.txt"), ("commit", "--quiet", "-m", "baseline"), ("push", "--quiet"),
    ):  # fmt: skip
        _git("-c", "user.name=t", "-c", "user.email=t@example.com", *command, cwd=checkout)
    second, checkout = _night(tmp_path, origin, 2)
    ran = {s.name: s for s in second}
    assert ran["Run the suite"].returncode == 0, ran["Run the suite"].output[-3000:]
    report = tmp_path / "night-2" / "artifacts" / "mathcomp-report"
    summary = summary_format.load(report / "latest")
    compared = [c["case"] for c in [*summary["cases"], *summary["generated_cases"]] if c.get("baseline")]
    assert len(compared) == 4 and any(c.startswith("generated:") for c in compared), compared
    history = (report / "history.html").read_text()
    runs = sorted(p.name for p in (checkout / "mathcomp-history").iterdir())
    assert len(runs) == 2 and all(r in history for r in runs), "both nights, the first from the CI's cache"
