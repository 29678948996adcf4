"""The nightly workflow run by the fake CI (fake_ci.py) as tests/test_nightly*.py run it: a night's CI run,
each job's folders in a scratch folder, and the history branch's remote, a real bare repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .fake_ci import FakeCI, Step
from .suite_runner import REPO

WORKFLOW = REPO / ".github" / "workflows" / "nightly.yml"
SELECTION = "--limit=30 --framings=neutral,direct-more --positions=end"
RUN = "Run the suite against the committed baseline"
BRANCH = "mathcomp-history"


def night_ci(tmp: Path, model: str, night: int = 1, shards: str | None = None) -> FakeCI:
    """The night's CI run, its `shards` job done (MATHCOMP_SHARDS: ``shards``, or unset), the first leg's
    matrix values set."""
    context = {
        "matrix.model": model,
        "matrix.shard": "1",
        "github.run_id": str(night),
        "github.run_attempt": "1",
        "runner.os": "Linux",
        "strategy.job-index": "0",
    }
    if shards is not None:
        context["vars.MATHCOMP_SHARDS"] = shards
    ci = FakeCI(WORKFLOW, REPO, tmp / "ci-cache", tmp / f"night-{night}" / "artifacts", context)
    ci.run("shards", {})
    return ci


def suite_env(tmp: Path, baseline: Path, args: str, night: int = 1) -> dict[str, str]:
    folder = tmp / f"night-{night}"
    return {
        "BASELINE": str(baseline),
        "REPORTS": str(folder / "reports"),
        "CACHE_DIR": str(folder / "answers"),
        "RECORD": str(folder / "record"),
        "SUITE_ARGS": args,
    }


def history_env(tmp: Path, night: int) -> dict[str, str]:
    folder = tmp / f"night-{night}"
    return {
        "RECORDS": str(folder / "records"),
        "HISTORY": str(folder / "history"),
        "SITE": str(folder / "site"),
        "TABLE": str(folder / "history.txt"),
        # A runner's git: no identity of its own, nothing from this machine's configuration.
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def origin_repo(tmp: Path) -> Path:
    """The repository's remote: a bare repository whose main holds one commit."""
    origin = tmp / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(origin))
    seed = tmp / "seed"
    git("clone", "-q", str(origin), str(seed))
    (seed / "README.md").write_text("a repository that runs the nightly workflow\n")
    git("add", "README.md", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "start", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    return origin


def checkout(tmp: Path, origin: Path, night: int) -> Path:
    """The history job's checkout, as actions/checkout leaves it: a clone whose `origin` is the remote."""
    checkout = tmp / f"night-{night}" / "checkout"
    git("clone", "-q", str(origin), str(checkout))
    return checkout


def kept(origin: Path) -> set[str]:
    """The run ids the history branch holds."""
    return set(git("--git-dir", str(origin), "ls-tree", "--name-only", BRANCH).splitlines())


def said(steps: list[Step]) -> str:
    return "\n".join(f"--- {s.name}: {s.returncode}\n{s.output[-3000:]}" for s in steps)
