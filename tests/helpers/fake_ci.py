"""A fake CI runner for the workflow tests: it runs a job's shell steps as the workflow states them (bash, the
job's and the step's environment, GITHUB_ENV, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, RUNNER_TEMP), decides
each job and step by its `if:` as GitHub does (success(), failure(), always(), cancelled() and comparisons of
context values; anything else is an error, never a guess), cancels a run as GitHub's runner does (SIGINT to the
step's own process, SIGTERM 7.5 s later, a kill 2.5 s after that), and stands in for the actions the steps rely
on with folders: actions/cache/restore and /save (a store carried from night to night, restored by exact key
or else by the newest key with a restore-keys prefix, as GitHub does; `cache-hit` set on an exact hit),
actions/upload-artifact, upload-pages-artifact and download-artifact (one run's artifacts folder; merged, or
each artifact in a folder of its name). A job's `outputs:` and its result are what later jobs read as
needs.<job>.outputs.* and needs.<job>.result. Checkout,
setup-python and the steps named "Set up" (the installs) are not run: the test runs in a checkout it made, in
the virtualenv set up already, first on PATH. Where this test worker has a warm parent (helpers/warm_runs.py),
the steps' ``python``, ``.venv/bin/python``, ``mathcomp`` and ``pytest`` are its stand-ins (helpers/warm_python.py): the
same commands, arguments, environment, descriptors and signals, forked from the parent instead of started
afresh."""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import warm_runs

SET_UP = ("actions/checkout@", "actions/setup-python@")
SET_UP_NAME = "Set up"
EXPRESSION = re.compile(r"\$\{\{\s*([A-Za-z_][\w.-]*(?:\s*\|\|\s*(?:[A-Za-z_][\w.-]*|'[^']*'))*)\s*\}\}")
"""``${{ key }}`` or a fallback chain ``${{ vars.X || 'default' }}`` (keys and quoted literals)."""
STATUS = {"success()", "failure()", "cancelled()", "always()"}
COMPARISON = re.compile(r"^([A-Za-z_][\w.-]*)\s*(==|!=)\s*'([^']*)'$")
VENV_PYTHON = re.compile(r"(?<![\w/.])\.venv/bin/python(?=\s)")
"""The virtualenv's interpreter as the steps name it (the set-up step made it in the checkout)."""
SIGINT_WAIT_S, SIGTERM_WAIT_S = 7.5, 2.5
"""How long GitHub's runner waits after each signal it sends a cancelled step (its ProcessInvoker)."""


@dataclass
class Step:
    name: str
    returncode: int | None
    """None: an action the fake stood in for, or a step skipped (by its condition)."""
    output: str = ""


@dataclass
class FakeCI:
    workflow: Path
    cwd: Path
    """Where a job runs, unless run() is given another checkout."""
    store: Path
    """The CI cache, kept from run to run (one folder per key, saved in order)."""
    artifacts: Path
    """This run's artifacts (one folder per name)."""
    context: dict[str, str] = field(default_factory=dict)
    """What ${{ ... }} expressions read: matrix.model, github.run_id, runner.os, ...; steps.<id>.outputs.* are
    added as steps write them. A key that is not here reads as '' in a condition, as on GitHub."""
    cancelled: bool = False
    """The run was cancelled (cancel()): later jobs see cancelled() true."""
    failed: bool = False
    """A job of this run failed: later jobs see success() false."""
    _job_cwd: Path | None = None
    _stand_ins: dict[str, Path] | None = None

    def job(self, name: str) -> dict[str, Any]:
        return dict(yaml.safe_load(self.workflow.read_text())["jobs"][name])

    def cancel(self, proc: subprocess.Popen[str]) -> None:
        """Cancel the run while ``proc`` (a running step) runs: SIGINT to the step's own process, as the
        runner sends it (not to its process group); run() escalates as the runner does."""
        self.cancelled = True
        proc.send_signal(signal.SIGINT)

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

    def holds(self, condition: object, status: str) -> bool:
        """Whether an `if:` holds with the job (or, for a job's own `if:`, the run) at ``status``: 'success',
        'failure' or 'cancelled'. Terms joined by &&: a status function (negated with !) or a comparison of a
        context value with a quoted literal; with no status function, success() is implied."""
        text = str(condition if condition is not None else "success()").strip()
        if text.startswith("${{") and text.endswith("}}"):
            text = text[3:-2].strip()
        terms = [t.strip() for t in text.split("&&")]
        if not any(t.lstrip("!") in STATUS for t in terms):
            terms.insert(0, "success()")
        return all(self._term(t, text, status) for t in terms)

    def _term(self, term: str, whole: str, status: str) -> bool:
        negated = term.startswith("!")
        name = term.lstrip("!")
        if name in STATUS:
            held = {
                "always()": True,
                "success()": status == "success",
                "failure()": status == "failure",
                "cancelled()": status == "cancelled",
            }[name]
            return held != negated
        compared = COMPARISON.match(term)
        if compared is None or negated:
            raise AssertionError(f"the fake CI cannot evaluate {term!r} in `if: {whole}`")
        key, op, literal = compared.groups()
        return (self.context.get(key, "") == literal) == (op == "==")

    def run(
        self,
        job_name: str,
        env: Mapping[str, str],
        during: Mapping[str, Callable[[subprocess.Popen[str]], None]] | None = None,
        cwd: Path | None = None,
    ) -> list[Step]:
        """The job's steps after set-up, in ``cwd`` (default: self.cwd), with ``env`` over the job's own;
        ``during[step name]`` is called with the step's process while it runs (to stop a server, or to
        cancel the run). A job whose `if:` does not hold is one skipped Step."""
        job = self.job(job_name)
        self._job_cwd = cwd or self.cwd
        self.context = {k: v for k, v in self.context.items() if not k.startswith("steps.")}  # the job's own
        run_status = "cancelled" if self.cancelled else "failure" if self.failed else "success"
        if not self.holds(job.get("if"), run_status):
            self.context[f"needs.{job_name}.result"] = "skipped"
            return [Step(job_name, None, "skipped: the job's condition does not hold")]
        declared = {k: str(v) for k, v in (job.get("env") or {}).items()}
        environment = {**declared, **env}
        environment = {k: self.expand(v, environment) if k not in env else v for k, v in environment.items()}
        self.artifacts.parent.mkdir(parents=True, exist_ok=True)
        files = {
            name: self.artifacts.parent / f"{job_name}.{name.lower()}"
            for name in ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
        }
        temp = self.artifacts.parent / f"{job_name}.runner_temp"
        temp.mkdir(exist_ok=True)
        environment |= {name: str(path) for name, path in files.items()} | {"RUNNER_TEMP": str(temp)}
        bin_folder = Path(sys.executable).parent
        if self._stand_ins is None:
            scripts = {name: [str(bin_folder / name)] for name in ("mathcomp", "pytest")}
            self._stand_ins = warm_runs.stand_ins({"python": [], **scripts}) or {}
        front = [str(self._stand_ins["python"].parent)] if self._stand_ins else []
        environment["PATH"] = ":".join([*front, str(bin_folder), os.environ["PATH"]])
        done: list[Step] = []
        status = "success"
        for step in job["steps"]:
            name = str(step.get("name") or step.get("uses") or step["run"].splitlines()[0])
            if name == SET_UP_NAME or str(step.get("uses", "")).startswith(SET_UP):
                continue
            if not self.holds(step.get("if"), status):
                done.append(Step(name, None, "skipped"))
                continue
            step_env = environment | {
                k: self.expand(str(v), environment) for k, v in (step.get("env") or {}).items()
            }
            if "uses" in step:
                self._action(str(step["uses"]), step.get("with") or {}, step_env, step.get("id"))
                done.append(Step(name, None))
                continue
            returncode, output = self._shell(step, name, step_env, files, during)
            for line in files["GITHUB_ENV"].read_text().splitlines():
                key, _, value = line.partition("=")
                environment[key] = value
            for line in files["GITHUB_OUTPUT"].read_text().splitlines():
                key, _, value = line.partition("=")
                if step.get("id"):
                    self.context[f"steps.{step['id']}.outputs.{key}"] = value
            done.append(Step(name, returncode, output))
            if self.cancelled and run_status != "cancelled":  # cancelled while this job ran
                status = "cancelled"
            elif returncode != 0 and status == "success":
                status = "failure"
        self.failed = self.failed or status == "failure"
        self.context[f"needs.{job_name}.result"] = status
        for key, value in (job.get("outputs") or {}).items():
            try:
                found = self.expand(str(value), environment)
            except KeyError:  # a step that wrote no such output (it failed first): '' on GitHub too
                found = ""
            self.context[f"needs.{job_name}.outputs.{key}"] = found
        return done

    def _shell(
        self,
        step: Mapping[str, Any],
        name: str,
        env: Mapping[str, str],
        files: Mapping[str, Path],
        during: Mapping[str, Callable[[subprocess.Popen[str]], None]] | None,
    ) -> tuple[int, str]:
        """One `run:` step as the runner runs it: a script file, bash -e -o pipefail; its output to a file, so
        that a step can be waited on while it runs; a cancel escalates as the runner's."""
        files["GITHUB_ENV"].write_text("")
        files["GITHUB_OUTPUT"].write_text("")
        script, log = (
            files["GITHUB_ENV"].with_suffix(".step.sh"),
            files["GITHUB_ENV"].with_suffix(".step.log"),
        )
        text = str(step["run"])
        if self._stand_ins:
            text = VENV_PYTHON.sub(str(self._stand_ins["python"]), text)
        script.write_text(text)
        with log.open("w") as out:
            proc = subprocess.Popen(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=self._job_cwd,
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        was_cancelled = self.cancelled
        if during and name in during:
            during[name](proc)
        if self.cancelled and not was_cancelled:
            for sig, wait in ((signal.SIGTERM, SIGINT_WAIT_S), (signal.SIGKILL, SIGTERM_WAIT_S)):
                try:
                    proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    proc.send_signal(sig)  # the step's own process, as the runner signals it
            proc.wait(timeout=60)
            with contextlib.suppress(ProcessLookupError):  # what the step left running: the runner ends it
                os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.wait(timeout=900)
        return proc.returncode, log.read_text(errors="replace")

    def _path(self, spec: str, env: Mapping[str, str]) -> Path | None:
        if spec.strip().startswith("~"):
            return None  # the runner's home (the hub cache): not simulated, this machine's stays untouched
        path = self.expand(spec, env)
        base = self._job_cwd or self.cwd
        return Path(path) if Path(path).is_absolute() else base / path

    def _action(
        self, uses: str, given: Mapping[str, Any], env: Mapping[str, str], step_id: str | None
    ) -> None:
        action = uses.split("@")[0]
        if action == "actions/cache/restore":
            hit = self._restore(given, env)
            if step_id:
                self.context[f"steps.{step_id}.outputs.cache-hit"] = "true" if hit else "false"
        elif action == "actions/cache/save":
            self._save(given, env)
        elif action in ("actions/upload-artifact", "actions/upload-pages-artifact"):
            source = self._path(str(given["path"]), env)
            name = self.expand(str(given.get("name", "github-pages")), env)
            if source is not None and source.exists():
                shutil.copytree(source, self.artifacts / name, dirs_exist_ok=True)
        elif action == "actions/download-artifact":
            target = self._path(str(given["path"]), env)
            assert target is not None, "the fake downloads into a folder of the job's"
            pattern = self.expand(str(given["pattern"]), env)
            for found in sorted(self.artifacts.iterdir()) if self.artifacts.exists() else []:
                if fnmatch.fnmatch(found.name, pattern):
                    into = target if given.get("merge-multiple") else target / found.name
                    shutil.copytree(found, into, dirs_exist_ok=True)
        else:
            raise AssertionError(f"the fake CI does not stand in for {uses}")

    def _keys(self) -> list[str]:
        index = self.store / "keys.json"
        return list(json.loads(index.read_text())) if index.exists() else []

    def _paths(self, given: Mapping[str, Any], env: Mapping[str, str]) -> list[Path | None]:
        """The cache's paths, one a line as actions/cache takes them (None: one the fake does not simulate)."""
        return [self._path(line, env) for line in str(given["path"]).splitlines() if line.strip()]

    def _restore(self, given: Mapping[str, Any], env: Mapping[str, str]) -> bool:
        """Restore by exact key, else by the newest key with a restore-keys prefix; True on an exact hit."""
        paths = self._paths(given, env)
        if not any(paths):
            return False
        key = self.expand(str(given["key"]), env)
        prefixes = [self.expand(p, env) for p in str(given.get("restore-keys") or "").split()]
        keys = self._keys()
        chosen = (
            key
            if key in keys
            else next((k for k in reversed(keys) if any(map(k.startswith, prefixes))), None)
        )
        if chosen is not None:
            saved = self.store / str(keys.index(chosen))
            for index, path in enumerate(paths):
                if path is not None and (saved / str(index)).exists():
                    shutil.copytree(saved / str(index), path, dirs_exist_ok=True)
        return chosen == key

    def _save(self, given: Mapping[str, Any], env: Mapping[str, str]) -> None:
        """Each path that is there, under the key's entry (one folder per path, by its place in the list)."""
        paths = self._paths(given, env)
        if not any(p is not None and p.exists() for p in paths):
            return
        key = self.expand(str(given["key"]), env)
        keys = self._keys()
        if key in keys:
            return  # GitHub keeps a key's first save
        for index, path in enumerate(paths):
            if path is not None and path.exists():
                shutil.copytree(path, self.store / str(len(keys)) / str(index))
        self.store.mkdir(parents=True, exist_ok=True)
        (self.store / "keys.json").write_text(json.dumps([*keys, key]))
