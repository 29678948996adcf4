"""One build for all the test session's workers: the first worker to ask builds, the others wait and reuse it."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def built_once(name: str, build: Callable[[Path], Path], fallback: Path) -> Path:
    """``build(folder)`` once per session into a folder every xdist worker sees (``$MATHCOMP_TESTS_SHARED``,
    made by the process that starts them); a worker that comes later waits on the lock and takes the result.
    A build that failed leaves nothing behind, so the next worker tries again. Without the shared folder
    (a run started otherwise) it builds into ``fallback``."""
    shared = os.environ.get("MATHCOMP_TESTS_SHARED")
    if not shared:
        return build(fallback)
    root = Path(shared) / "built"
    root.mkdir(exist_ok=True)
    done = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_dir():
            return done
        staging = root / f".{name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            result = build(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if result == staging:
            staging.rename(done)
        else:
            shutil.copytree(result, done)
        return done
