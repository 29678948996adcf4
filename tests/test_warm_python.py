"""The warm parent's stand-ins for ``python`` (helpers/warm_python.py, helpers/warm_shim.py): a command they
run is the one a fresh interpreter runs, in what it sees, what it returns and how signals reach it; what they
cannot run so goes to a fresh interpreter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import warm_python, warm_runs
from helpers.warm_preload import BARE

PROBE = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "value": os.environ.get("PROBE_VALUE"),
                  "path0": sys.path[0], "stdin": sys.stdin.read(), "pid": os.getpid(),
                  "parent": os.getppid(), "tty": sys.stdout.isatty()}))
print("to stderr", file=sys.stderr)
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture(scope="module")
def python() -> str:
    found = warm_runs.stand_ins({"python": []})
    if found is None:
        pytest.skip("no warm parent here (MATHCOMP_TESTS_WARM=0, or no fork)")
    return str(found["python"])


def _probe(interpreter: str, tmp_path: Path, *argv: str, **env: str) -> tuple[dict[str, object], str, int]:
    done = subprocess.run(
        [interpreter, *argv], cwd=tmp_path, input="from stdin", capture_output=True, text=True,
        env={**os.environ, **env}, timeout=120,
    )  # fmt: skip
    return json.loads(done.stdout), done.stderr, done.returncode


@pytest.mark.parametrize("form", ["-c", "script", "-m"])
def test_a_command_run_by_the_stand_in_is_the_fresh_one(python: str, tmp_path: Path, form: str) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    argv = {"-c": ["-c", PROBE, "a b"], "script": ["probe.py", "a b"], "-m": ["-m", "probe", "a b"]}[form]
    forked, forked_err, forked_code = _probe(python, tmp_path, *argv, PROBE_VALUE="one", PROBE_EXIT="3")
    fresh, fresh_err, fresh_code = _probe(sys.executable, tmp_path, *argv, PROBE_VALUE="one", PROBE_EXIT="3")
    assert forked["parent"] != os.getpid(), f"forked from the warm parent, not started here: {warm_runs.refusals()}"
    for result in (forked, fresh):
        result.pop("pid"), result.pop("parent")
    assert (forked, forked_err, forked_code) == (fresh, fresh_err, fresh_code)
    assert fresh["stdin"] == "from stdin" and fresh_code == 3


def test_signals_reach_the_command_and_its_end_is_the_stand_ins(python: str, tmp_path: Path) -> None:
    code = "import sys, time\ntry:\n    print('up', flush=True)\n    time.sleep(60)\n"
    code += "except KeyboardInterrupt:\n    sys.exit(7)"
    for sig, ended in ((signal.SIGINT, 7), (signal.SIGTERM, -signal.SIGTERM)):
        proc = subprocess.Popen([python, "-c", code], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "up\n"
        proc.send_signal(sig)
        assert proc.wait(60) == ended


def test_a_killed_stand_in_leaves_no_command_running(python: str, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)"
    proc = subprocess.Popen([python, "-c", code])
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the command never started"  # hang guard
        time.sleep(0.05)
    command = int(pid_file.read_text())
    proc.kill()
    proc.wait(30)
    while Path(f"/proc/{command}").exists() and "zombie" not in Path(f"/proc/{command}/status").read_text():
        assert time.monotonic() < deadline, "the command outlived its killed stand-in"  # hang guard
        time.sleep(0.05)


def test_what_a_preloaded_library_reads_at_import_sends_the_command_to_a_fresh_interpreter(
    python: str, tmp_path: Path
) -> None:
    code = "import os, sys; print(os.getppid())"
    other = {"HF_HOME": f"{os.environ.get('HF_HOME', '')}-another"}  # huggingface_hub reads it as it imports
    for argv, env in ((["-X", "dev", "-c", code], {}), (["-c", code], other)):
        done = subprocess.run([python, *argv], capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
        assert done.returncode == 0 and int(done.stdout) == os.getpid(), "the stand-in became the interpreter"


def _forked_and_fresh(python: str, code: str, **run: Any) -> list[str]:
    """What `python -c CODE` prints before its parent's pid, run by the stand-in (forked from the warm parent)
    and by a fresh interpreter, in that order; each checked to have run where it should."""
    seen = []
    for interpreter in (python, sys.executable):
        done = subprocess.run([interpreter, "-c", code], capture_output=True, text=True, timeout=120, **run)
        assert done.returncode == 0, done.stderr
        value, parent = done.stdout.split()
        seen.append(value)
        assert (int(parent) != os.getpid()) == (interpreter == python), warm_runs.refusals()
    return seen


def test_the_offline_switches_are_the_commands_own(python: str, tmp_path: Path) -> None:
    """HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE, read once as huggingface_hub imports, are what a fresh
    interpreter reads from the command's environment (a nightly leg for a hub model sets them to 0)."""
    code = "import os\nfrom huggingface_hub import constants\nprint(constants.is_offline_mode(), os.getppid())"
    plain = {k: v for k, v in os.environ.items() if k not in warm_python.OFFLINE}
    for switches in ({"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0"}, {"TRANSFORMERS_OFFLINE": "1"}, {}):
        seen = _forked_and_fresh(python, code, env={**plain, **switches})
        assert seen[0] == seen[1] == str(switches.get("TRANSFORMERS_OFFLINE") == "1"), (switches, seen)


def test_matplotlib_reads_the_commands_own_rc_file_as_a_fresh_interpreter_does(python: str, tmp_path: Path) -> None:
    """The warm parent imported matplotlib in its own working directory: a `matplotlibrc` in the command's
    sets what the command draws with, as it does for a fresh interpreter (and none leaves the defaults)."""
    code = "import os, matplotlib\nprint(matplotlib.rcParams['lines.linewidth'], os.getppid())"
    with_rc = tmp_path / "with"
    with_rc.mkdir()
    (with_rc / "matplotlibrc").write_text("lines.linewidth: 7.5\n")
    for folder, width in ((with_rc, "7.5"), (tmp_path, "1.5")):
        assert _forked_and_fresh(python, code, cwd=folder) == [width, width], folder


def test_the_refusals() -> None:
    started = {"HF_HOME": "/hf", "PATH": "/bin"}
    imported = {**started, "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor"}
    env = {**started, "PATH": "/usr/bin", "PYTHONPATH": "x", "PYTHON": "python3", "HF_HUB_OFFLINE": "0"}
    ok = {"argv": ["-u", "-m", "pytest"], "cwd": "/", "env": env}
    assert warm_python.refusal(ok, started, imported) is None, "PATH read later, PYTHONPATH applied, PYTHON unread"
    for option in ("-O", "-B"):  # what a fresh interpreter sets in sys.flags: the parent's cannot change
        assert warm_python.refusal({**ok, "argv": [option, "-c", "pass"]}, started, imported) is not None
    assert warm_python.refusal({**ok, "argv": []}, started, imported) is not None, "an interactive interpreter"
    assert warm_python.refusal({**ok, "env": {"PYTHONHASHSEED": "0", **started}}, started, imported) is not None
    observed = {"HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY": "1", **started}  # Hypothesis reads it as it imports
    assert warm_python.refusal({**ok, "env": observed}, started, imported) is not None
    assert warm_python.refusal({**ok, "env": {}}, started, imported) is not None, "HF_HOME unset differs"
    torch_set = {**env, "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor"}
    assert warm_python.refusal({**ok, "env": torch_set}, started, imported) is None, "the value torch sets itself"
    other = {**env, "TORCHINDUCTOR_CACHE_DIR": "/elsewhere"}
    assert warm_python.refusal({**ok, "env": other}, started, imported) is not None


def test_a_signal_the_stand_in_was_started_ignoring_the_command_ignores_too(python: str) -> None:
    """`nohup` leaves SIGHUP ignored in every process it starts: so in the command, and no other signal."""
    shown = "import signal; print([signal.getsignal(s) == signal.SIG_IGN for s in (signal.SIGHUP, signal.SIGTERM)])"
    seen = [
        subprocess.run(
            [python, "-c", shown], capture_output=True, text=True, timeout=60,
            preexec_fn=lambda: signal.signal(signal.SIGHUP, disposition),  # noqa: B023 (called at once)
        ).stdout.strip()
        for disposition in (signal.SIG_IGN, signal.SIG_DFL)
    ]  # fmt: skip
    assert seen == ["[True, False]", "[False, False]"]


def test_the_warm_parent_has_the_workers_environment_whichever_test_starts_it(tmp_path: Path) -> None:
    """A test that changed HF_HOME (say) for itself when it happened to start the warm parent left the parent
    with that value, and every later command of that worker went afresh (refused as another HF_HOME)."""
    if os.environ.get(warm_runs.SWITCH) == "0" or not hasattr(os, "fork"):
        pytest.skip("no warm parent here (MATHCOMP_TESTS_WARM=0, or no fork)")
    script = tmp_path / "start_under_a_change.py"
    script.write_text(
        "import json, os, subprocess, sys\n"
        "from helpers import warm_runs\n"
        "kept = os.environ['HF_HOME']\n"
        "os.environ['HF_HOME'] = kept + '-changed-by-a-test'\n"
        "python = warm_runs.python()\n"
        "os.environ['HF_HOME'] = kept\n"
        "parent = subprocess.run([python, '-c', 'import os; print(os.getppid())'], capture_output=True, text=True)\n"
        "print(json.dumps({'forked': int(parent.stdout) != os.getpid(), 'refusals': warm_runs.refusals()}))\n"
    )
    tests = Path(__file__).parent
    path = os.pathsep.join(filter(None, [str(tests), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, warm_runs.SWITCH: BARE}  # its environment, not its imports, counts
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"forked": True, "refusals": ""}, seen


def test_a_forked_runs_xdist_workers_are_forked_and_its_other_commands_start_afresh(tmp_path: Path) -> None:
    """In a forked run, and in a command a stand-in handed the warm parent, sys.executable is a stand-in that
    hands the parent what an xdist worker starts with (execnet's bootstrap) and nothing else: a command the
    worker starts itself is its own child."""
    (tmp_path / "test_where.py").write_text(
        "import json, os, subprocess, sys\n\n"
        "def test_where():\n"
        "    shown = subprocess.run([sys.executable, '-c', 'import os; print(os.getppid())'],\n"
        "                           capture_output=True, text=True, check=True)\n"
        "    seen = {'worker': os.getpid(), 'worker_parent': os.getppid(), 'command_parent': int(shown.stdout)}\n"
        "    open('where.json', 'w').write(json.dumps(seen))\n"
    )
    args = ["-p", "no:cacheprovider", "-q", "-n", "1", "test_where.py"]
    forked = warm_runs.run(args, tmp_path, dict(os.environ), 120)
    if forked is None:
        pytest.skip("no warm parent here (MATHCOMP_TESTS_WARM=0, or no fork)")
    for by in ("a run of the warm parent's", "a command a stand-in handed it"):
        if by != "a run of the warm parent's":
            stand_in = [warm_runs.python(), "-m", "pytest", *args]
            forked = subprocess.run(stand_in, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert forked.returncode == 0, forked.stdout + forked.stderr
        seen = json.loads((tmp_path / "where.json").read_text())
        assert warm_runs._parent is not None and seen["worker_parent"] == warm_runs._parent.pid, (by, seen)
        assert seen["command_parent"] == seen["worker"], "started afresh, as itself"
        (tmp_path / "where.json").unlink()


CAUGHT = """
import os, signal, subprocess, sys, time
from pathlib import Path

def caught(number, _frame):
    Path(sys.argv[1]).write_text(f"{number} {os.getppid()}")
    sys.exit(0)

signal.signal(signal.SIGTERM, caught)
if sys.argv[1] == "command":
    child = subprocess.Popen([sys.executable, __file__, "child"])
    while not Path("child").exists():
        time.sleep(0.02)
    Path("up").write_text("")
    child.wait()
else:
    Path("child").write_text("")
time.sleep(60)
"""


def test_a_signal_to_the_group_of_a_group_stand_in_reaches_its_command_and_its_childs_too(tmp_path: Path) -> None:
    """A CI runner's timeout signals the job's whole process group: the command a stand-in for a group's
    leader runs, and the processes it starts (xdist's workers), each get the signal, as with a fresh one."""
    group = warm_runs.python(group=True)
    if group == sys.executable:
        pytest.skip("no warm parent here (MATHCOMP_TESTS_WARM=0, or no fork)")
    seen = {}
    for name, interpreter in (("stand-in", group), ("fresh", sys.executable)):
        work = tmp_path / name
        work.mkdir()
        (work / "caught.py").write_text(CAUGHT)
        proc = subprocess.Popen([interpreter, "caught.py", "command"], cwd=work, start_new_session=True)
        deadline = time.monotonic() + 60
        while not (work / "up").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the command never started"  # hang guard
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(60) == 0
        seen[name] = {who: (work / who).read_text().split() for who in ("command", "child")}
    assert seen["stand-in"]["command"][0] == seen["fresh"]["command"][0] == str(int(signal.SIGTERM))
    assert seen["stand-in"]["child"][0] == seen["fresh"]["child"][0] == str(int(signal.SIGTERM))
    assert seen["stand-in"]["command"][1] != str(os.getpid()), "forked from the warm parent, not started here"
