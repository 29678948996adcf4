"""One warm process for all the test workers (helpers/warm_zygote.py): each worker's warm parent is forked
from it, serves that worker as a parent it started itself would, and is refused where the worker's
environment is not the one the zygote imported with."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import warm_runs
from helpers.warm_preload import BARE

TESTS = Path(__file__).parent
"""On PYTHONPATH: ``helpers`` and this folder's conftest.py (``-p conftest``) importable."""

WORKER = """
import json, os, sys
from pathlib import Path
from helpers import warm_runs
where = Path(sys.argv[1])
(where / "test_one.py").write_text("def test_one():\\n    print('ran')\\n")
ran = warm_runs.run(["-p", "no:cacheprovider", "-s", "-q", "test_one.py"], where, dict(os.environ), 120)
parent = warm_runs._parent
stat = Path(f"/proc/{parent.pid}/stat").read_text()
print(json.dumps({
    "kind": type(parent).__name__, "ppid": int(stat.rsplit(")", 1)[1].split()[1]), "returncode": ran.returncode,
    "out": ran.stdout,
    "cpu": warm_runs.forked_cpu(),
}))
"""


def _ppid(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A zygote that preloads nothing (MATHCOMP_TESTS_WARM=bare: what it imports is not what is tested)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    socket_path = str(tmp_path / "zygote")
    env = {**os.environ, warm_runs.SWITCH: BARE}
    proc = subprocess.Popen(
        [sys.executable, str(warm_runs.ZYGOTE_SCRIPT), socket_path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout is not None and json.loads(proc.stdout.readline()) == {"listening": True}
    yield proc, socket_path
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _worker(zygote: str, where: Path, **env: str) -> dict[str, object]:
    environ = {**os.environ, warm_runs.SWITCH: BARE, warm_runs.ZYGOTE: zygote, "PYTHONPATH": str(TESTS), **env}
    shown = subprocess.run(
        [sys.executable, "-c", WORKER, str(where)], env=environ, capture_output=True, text=True, timeout=300
    )
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout.splitlines()[-1]))


def test_a_workers_parent_is_forked_from_the_zygote_runs_as_its_own_and_ends_with_it(
    zygote: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    proc, socket_path = zygote
    seen = _worker(socket_path, tmp_path)
    assert seen["kind"] == "ForkedParent" and seen["ppid"] == proc.pid, seen
    assert seen["returncode"] == 0 and "ran" in str(seen["out"]), seen
    assert float(str(seen["cpu"])) > 0, "the run's CPU is the worker's"
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(60) == 0, "it ends once its stdin closes and the parents it forked have ended"  # hang guard


def test_a_worker_whose_environment_the_zygote_did_not_import_with_starts_its_own_parent(
    zygote: tuple[subprocess.Popen[bytes], str], tmp_path: Path
) -> None:
    _, socket_path = zygote
    seen = _worker(socket_path, tmp_path, HF_HOME=str(tmp_path / "another-hf-home"))
    assert seen["kind"] == "Popen" and seen["ppid"] != zygote[0].pid and seen["returncode"] == 0, seen


def test_this_runs_workers_and_their_parents_are_forked_from_one_zygote_with_one_hf_home() -> None:
    if "PYTEST_XDIST_WORKER" not in os.environ or os.environ.get(warm_runs.SWITCH) == "0":
        pytest.skip("not an xdist worker with warm parents")
    assert os.environ.get(warm_runs.ZYGOTE), "the process that started the workers started a zygote"
    assert os.environ["MATHCOMP_TESTS_HF_HOME_OF"] != str(os.getpid()), "HF_HOME is the one it started with"
    warm_runs.python()  # starts this worker's warm parent, if no test has yet
    parent = warm_runs._parent
    assert isinstance(parent, warm_runs.ForkedParent), "forked from the zygote, not started here"
    assert _ppid(parent.pid) == _ppid(os.getpid()), "this worker and its parent: both forked from the zygote"


BLOCKED = """
import os

def test_blocked():
    with open("started", "w") as fifo:  # the outer test reads it: this run is in its test
        fifo.write("x")
    os.open("never", os.O_RDONLY)  # nobody writes: here until Ctrl-C
"""


def test_ctrl_c_on_a_run_ends_it_with_its_warm_processes_and_without_a_word_from_them(tmp_path: Path) -> None:
    """The zygote is in the run's process group, so Ctrl-C reached it too: it died printing a
    KeyboardInterrupt traceback, and the stand-ins of the workers it had forked said the parent ended first."""
    if not hasattr(os, "fork") or os.environ.get(warm_runs.SWITCH) == "0":
        pytest.skip("no warm processes here")
    (tmp_path / "test_blocked.py").write_text(BLOCKED)
    for fifo in ("started", "never"):
        os.mkfifo(tmp_path / fifo)
    started = os.open(tmp_path / "started", os.O_RDONLY | os.O_NONBLOCK)
    env = {k: v for k, v in os.environ.items() if k not in (warm_runs.ZYGOTE, "PYTEST_XDIST_WORKER")}
    env.update({warm_runs.SWITCH: BARE, "PYTHONPATH": str(TESTS)})
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-n", "1", "-q"]
    proc = subprocess.Popen(
        [*command, "test_blocked.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert select.select([started], [], [], 300)[0], "the run never reached its test"  # hang guard
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches every process of the terminal's job
        shown = proc.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        os.close(started)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, shown
    assert "Traceback" not in shown and "ended before the command did" not in shown, shown
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)  # nothing of the run is left
