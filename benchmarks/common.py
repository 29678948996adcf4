"""What every benchmark shares: the machine it ran on, the load around each number, and a subprocess runner
that records wall time and peak memory (resident set of the whole process tree, sampled)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "reports" / "benchmarks"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
PAPER_IDENTITIES = "std,woman,man,black,white,asian,hispanic,african"


def suite_env() -> dict[str, str]:
    """The environment a user's suite run has: offline switches on, bytecode written as usual."""
    env = {**os.environ, **OFFLINE, "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTEST_XDIST_AUTO_NUM_WORKERS", None)
    return env


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ram_gib() -> float | None:
    try:
        import psutil

        return round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        return None


def gpu() -> str | None:
    try:
        import torch

        if torch.cuda.is_available():
            return ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    except ImportError:
        pass
    return None


def machine() -> dict[str, Any]:
    """CPU, cores, memory, GPU, Python and the versions of what the numbers depend on."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": ram_gib(),
        "gpu": gpu(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            name: _version(name)
            for name in ("torch", "transformers", "litellm", "openai", "pytest", "matplotlib")
        },
    }


@dataclass(frozen=True)
class Tracked:
    seconds: float
    peak_rss_mib: float
    """Largest sum of resident memory over the process and all its descendants at one sample."""
    peak_single_rss_mib: float
    """Largest resident memory of any one process of the tree."""
    returncode: int
    stdout: str
    stderr: str

    def last_line(self) -> str:
        lines = self.stdout.strip().splitlines()
        return lines[-1] if lines else ""


def run_tracked(
    command: list[str], *, env: dict[str, str] | None = None, cwd: Path = ROOT, timeout: float = 1800
) -> Tracked:
    """Run ``command`` to the end, sampling the memory of its process tree every 50 ms."""
    import psutil

    started = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=cwd, env=env or suite_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    peak = [0.0, 0.0]
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                sizes = []
                for p in tree:
                    with _quiet():
                        sizes.append(p.memory_info().rss)
                peak[0] = max(peak[0], sum(sizes) / 2**20)
                peak[1] = max(peak[1], max(sizes, default=0) / 2**20)
            except psutil.Error:
                pass
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        done.set()
        sampler.join()
    return Tracked(
        round(time.perf_counter() - started, 3),
        round(peak[0], 1),
        round(peak[1], 1),
        proc.returncode,
        out,
        err,
    )


class _quiet:
    """Ignore a process that ended between listing and reading it."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, tb: object) -> bool:
        import psutil

        return isinstance(value, psutil.Error)


def pytest_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def checked(result: Tracked, what: str, ok: tuple[int, ...] = (0,)) -> Tracked:
    if result.returncode not in ok:
        raise SystemExit(
            f"{what} failed ({result.returncode}):\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
        )
    return result


def write_json(name: str, result: dict[str, Any]) -> Path:
    import json

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path
