"""A fake CI runner for the workflow tests: it runs a job's shell steps as the workflow states them (bash,
the job's environment, GITHUB_ENV and GITHUB_STEP_SUMMARY files, `if: always()`), and stands in for the
actions the steps rely on with folders: actions/cache/restore and /save (a store carried from night to
night, restored by exact key or else by the newest key with a restore-keys prefix, as GitHub does),
actions/upload-artifact and download-artifact (one run's artifacts folder). Checkout, setup-python and
`make setup` are not run: the test runs in this checkout, in the virtualenv set up already."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SET_UP = ("actions/checkout@", "actions/setup-python@")
EXPRESSION = re.compile(r"\$\{\{\s*([A-Za-z_][\w.]*(?:\s*\|\|\s*(?:[A-Za-z_][\w.]*|'[^']*'))*)\s*\}\}")
"""``${{ key }}`` or a fallback chain ``${{ vars.X || 'default' }}`` (keys and quoted literals)."""


@dataclass
class Step:
    name: str
    returncode: int | None
    """None: an action the fake stood in for, or a step skipped after a failure."""
    output: str = ""


@dataclass
class FakeCI:
    workflow: Path
    cwd: Path
    store: Path
    """The CI cache, kept from run to run (one folder per key, saved in order)."""
    artifacts: Path
    """This run's artifacts (one folder per name)."""
    context: dict[str, str] = field(default_factory=dict)
    """What ${{ ... }} expressions read: matrix.model, github.run_id, runner.os, ..."""

    def job(self, name: str) -> dict[str, Any]:
        return dict(yaml.safe_load(self.workflow.read_text())["jobs"][name])

    def expand(self, text: str, env: Mapping[str, str]) -> str:
        def value(match: re.Match[str]) -> str:
            operands = [o.strip() for o in match.group(1).split("||")]
            for operand in operands[:-1]:  # a fallback chain: the first that is set (vars.* unset here)
                found = operand[1:-1] if operand.startswith("'") else self.context.get(operand, "")
                if found:
                    return found
            key = operands[-1]
            if key.startswith("'"):
                return key[1:-1]
            if key.startswith("env."):
                return env[key[4:]]
            if key not in self.context:
                raise KeyError(f"the fake CI has no value for ${{{{ {key} }}}} (add it to context)")
            return self.context[key]

        return EXPRESSION.sub(value, text)

    def run(
        self,
        job_name: str,
        env: Mapping[str, str],
        during: Mapping[str, Callable[[subprocess.Popen[str]], None]] | None = None,
    ) -> list[Step]:
        """The job's steps after set-up, with ``env`` over the job's own; ``during[step name]`` is called
        with the step's process while it runs (to stop a server, or to send a signal)."""
        job = self.job(job_name)
        declared = {k: str(v) for k, v in (job.get("env") or {}).items()}
        environment = {**declared, **env}
        environment = {k: self.expand(v, environment) if k not in env else v for k, v in environment.items()}
        self.artifacts.parent.mkdir(parents=True, exist_ok=True)
        github_env = self.artifacts.parent / f"{job_name}.github_env"
        summary = self.artifacts.parent / f"{job_name}.step_summary"
        environment |= {"GITHUB_ENV": str(github_env), "GITHUB_STEP_SUMMARY": str(summary)}
        environment["PATH"] = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
        done: list[Step] = []
        failed = False
        for step in job["steps"]:
            name = str(step.get("name") or step.get("uses") or step["run"].splitlines()[0])
            if step.get("run", "").strip() == "make setup" or str(step.get("uses", "")).startswith(SET_UP):
                continue
            if failed and step.get("if") != "always()":
                done.append(Step(name, None, "skipped"))
                continue
            if "uses" in step:
                self._action(str(step["uses"]), step.get("with") or {}, environment)
                done.append(Step(name, None))
                continue
            github_env.write_text("")
            proc = subprocess.Popen(
                ["bash", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.cwd,
                env={**os.environ, **environment},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            if during and name in during:
                during[name](proc)
            output, _ = proc.communicate(timeout=900)
            for line in github_env.read_text().splitlines():
                key, _, value = line.partition("=")
                environment[key] = value
            done.append(Step(name, proc.returncode, output))
            failed = failed or proc.returncode != 0
        return done

    def _path(self, spec: str, env: Mapping[str, str]) -> Path | None:
        path = self.expand(spec, env)
        if path.startswith("~"):
            return None  # the runner's home (the hub cache): not simulated, this machine's stays untouched
        return Path(path) if Path(path).is_absolute() else self.cwd / path

    def _action(self, uses: str, given: Mapping[str, Any], env: Mapping[str, str]) -> None:
        action = uses.split("@")[0]
        if action == "actions/cache/restore":
            self._restore(given, env)
        elif action == "actions/cache/save":
            self._save(given, env)
        elif action == "actions/upload-artifact":
            source = self._path(str(given["path"]), env)
            if source is not None and source.exists():
                shutil.copytree(
                    source, self.artifacts / self.expand(str(given["name"]), env), dirs_exist_ok=True
                )
        elif action == "actions/download-artifact":
            target = self._path(str(given["path"]), env)
            assert target is not None and given.get("merge-multiple"), "the fake downloads merged artifacts"
            pattern = self.expand(str(given["pattern"]), env)
            for found in sorted(self.artifacts.iterdir()) if self.artifacts.exists() else []:
                if fnmatch.fnmatch(found.name, pattern):
                    shutil.copytree(found, target, dirs_exist_ok=True)
        else:
            raise AssertionError(f"the fake CI does not stand in for {uses}")

    def _keys(self) -> list[str]:
        index = self.store / "keys.json"
        return list(json.loads(index.read_text())) if index.exists() else []

    def _restore(self, given: Mapping[str, Any], env: Mapping[str, str]) -> None:
        path = self._path(str(given["path"]), env)
        if path is None:
            return
        key = self.expand(str(given["key"]), env)
        prefixes = [self.expand(p, env) for p in str(given.get("restore-keys") or "").split()]
        keys = self._keys()
        chosen = (
            key
            if key in keys
            else next((k for k in reversed(keys) if any(map(k.startswith, prefixes))), None)
        )
        if chosen is not None:
            shutil.copytree(self.store / str(keys.index(chosen)), path, dirs_exist_ok=True)

    def _save(self, given: Mapping[str, Any], env: Mapping[str, str]) -> None:
        path = self._path(str(given["path"]), env)
        key = self.expand(str(given["key"]), env)
        keys = self._keys()
        if path is None or not path.exists() or key in keys:
            return  # GitHub keeps a key's first save
        shutil.copytree(path, self.store / str(len(keys)))
        self.store.mkdir(parents=True, exist_ok=True)
        (self.store / "keys.json").write_text(json.dumps([*keys, key]))
