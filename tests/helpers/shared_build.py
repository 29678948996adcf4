"""One build for all the test session's workers: the first worker to ask builds, the others wait and reuse it."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def built_once(name: str, build: Callable[[Path], Path], fallback: Path, *, in_place: bool = False) -> Path:
    """``build(folder)`` once per session into a folder every xdist worker sees (``$MATHCOMP_TESTS_SHARED``,
    made by the process that starts them); a worker that comes later waits on the lock and takes the result.
    A build that failed leaves nothing behind, so the next worker tries again. Without the shared folder
    (a run started otherwise) it builds into ``fallback``.

    ``in_place``: the build is made in the folder it is handed out from (for what writes its own absolute
    paths, such as a suite run's summary.json), finished once a mark beside it says so; else it is made in a
    staging folder and moved there when done."""
    shared = os.environ.get("MATHCOMP_TESTS_SHARED")
    if not shared:
        return build(fallback)
    root = Path(shared) / "built"
    root.mkdir(exist_ok=True)
    done, finished = root / name, root / f"{name}.finished"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if finished.is_file() if in_place else done.is_dir():
            return done
        staging = done if in_place else root / f".{name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            result = build(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if in_place:
            finished.touch()
        elif result == staging:
            staging.rename(done)
        else:
            shutil.copytree(result, done)
        return done
