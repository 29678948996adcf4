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

from mathcomp_tests import init

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


def test_the_first_night_gates_against_the_baseline_the_recipe_makes(tmp_path: Path) -> None:
    init.init(tmp_path, "symbolic")
    env = {
        **os.environ,
        "PYTEST_ADDOPTS": SMALL,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    first = subprocess.run(["bash", "-c", _step(tmp_path, "Run the suite")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert first.returncode == 0, first.stdout[-2000:]
    assert (
        "--baseline" not in first.stdout and "against the baseline" not in first.stdout
    )  # none committed yet
    recipe = re.search(r"```bash\n(pytest [^\n]+)\n", (tmp_path / "mathcomp-baseline/README.md").read_text())
    assert recipe is not None
    made = subprocess.run(["bash", "-c", recipe.group(1).replace("<the base model>", "symbolic")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert (tmp_path / "mathcomp-baseline/baseline.txt").is_file(), made.stdout[-2000:]
    night = subprocess.run(["bash", "-c", _step(tmp_path, "Run the suite")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert night.returncode == 0, night.stdout[-2000:]
    import json

    summary = json.loads((tmp_path / "reports/latest/summary.json").read_text())
    compared = [c["case"] for c in [*summary["cases"], *summary["generated_cases"]] if c.get("baseline")]
    assert len(compared) == 4 and any(c.startswith("generated:") for c in compared), compared
