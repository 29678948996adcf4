"""vllm:... without a vLLM: how the model is spelled, how the server is started and kept from outliving
the run (with a stand-in command where vLLM would run), and the usage errors. test_vllm.py runs it all
against a real vLLM."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.backends.base import BackendError
from mathcomp_tests.backends.models import resolve, same_model
from mathcomp_tests.backends.vllm import server as vllm_server
from mathcomp_tests.settings import BackendOptions

DEMO = REPO / "fixtures" / "models" / "mathcomp-tiny"


def test_vllm_models_are_spelled_like_hf_ones_and_share_their_ceilings() -> None:
    local = resolve("vllm:fixtures/models/mathcomp-tiny")
    assert (local.kind, local.name, local.directory) == (
        "vllm",
        "fixtures/models/mathcomp-tiny",
        DEMO.resolve(),
    )
    assert local.resolved == "vllm:fixtures/models/mathcomp-tiny"
    assert same_model("hf:fixtures/models/mathcomp-tiny", local), "same weights, same [model.*] section"
    assert same_model("mathcomp-tiny", local)
    hub = resolve("vllm:Qwen/Qwen2.5-3B-Instruct")
    assert (hub.kind, hub.directory, hub.canonical) == ("vllm", None, "hf:Qwen/Qwen2.5-3B-Instruct")
    assert same_model("qwen2.5-3b", hub) and not same_model("qwen2.5-7b", hub)


def test_the_server_gets_a_cpu_kv_cache_that_fits_unless_told_otherwise() -> None:
    """vLLM's CPU build reserves 92% of memory by default and refused to start on a 24 GB machine with
    15 GiB free: `pytest --model=vllm:fixtures/models/mathcomp-tiny` failed as the docs wrote it."""
    env = vllm_server.server_env(BackendOptions(), {"PATH": "/bin"})
    assert env == {"PATH": "/bin", "VLLM_HOST_IP": "127.0.0.1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    theirs = vllm_server.server_env(BackendOptions(), {"VLLM_CPU_KVCACHE_SPACE": "8"})
    assert theirs["VLLM_CPU_KVCACHE_SPACE"] == "8"
    share = vllm_server.server_env(BackendOptions(vllm_gpu_memory_utilization=0.5), {})
    assert "VLLM_CPU_KVCACHE_SPACE" not in share and share["VLLM_HOST_IP"] == "127.0.0.1"


def test_server_arguments_carry_the_options_given_and_nothing_else() -> None:
    options = BackendOptions(
        vllm_tensor_parallel_size=2,
        vllm_data_parallel_size=4,
        vllm_dtype="bfloat16",
        vllm_max_model_len=4096,
        vllm_gpu_memory_utilization=0.85,
        vllm_args="--max-num-seqs 512 --served-model-name 'a b'",
    )
    args = vllm_server.server_args("/m", 8000, options)
    assert args == [
        "--model", "/m", "--host", "127.0.0.1", "--port", "8000",
        "--tensor-parallel-size", "2", "--data-parallel-size", "4", "--dtype", "bfloat16",
        "--max-model-len", "4096", "--gpu-memory-utilization", "0.85",
        "--max-num-seqs", "512", "--served-model-name", "a b",
    ]  # fmt: skip
    assert vllm_server.server_args("/m", 1, BackendOptions()) == [
        "--model",
        "/m",
        "--host",
        "127.0.0.1",
        "--port",
        "1",
    ]
    with pytest.raises(BackendError, match="cannot be split"):
        vllm_server.server_args("/m", 1, BackendOptions(vllm_args="--x 'unclosed"))


def test_the_vllm_python_must_exist(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"--vllm-python=.*no executable Python"):
        vllm_server.find_python(str(tmp_path / "nothing"))


def test_without_a_vllm_python_the_run_is_one_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    run = run_suite(tmp_path, "--model=vllm:fixtures/models/mathcomp-tiny", f"--vllm-python={missing}")
    assert run.returncode == 4, run.output
    assert f"--vllm-python={missing}: no executable Python there" in run.output


STAND_IN = textwrap.dedent(
    """
    # A stand-in for the vLLM server, for the watchdog alone: it starts a child of its own (as vLLM
    # starts its engine) and both wait; it writes their ids, then serves nothing.
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(sys.argv[1], "w").write(f"{os.getpid()} {child.pid}")
    time.sleep(600)
    """
)
PARENT = textwrap.dedent(
    """
    # The process that starts the server (pytest, in a run): starts it under the watchdog, then waits.
    import subprocess, sys, os, time
    watchdog, stand_in, ids = sys.argv[1:4]
    subprocess.Popen([sys.executable, watchdog, str(os.getpid()), "--", sys.executable, stand_in, ids],
                     start_new_session=True)
    time.sleep(600)
    """
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_kill_9_of_the_starting_process_ends_the_server_and_what_it_started(tmp_path: Path) -> None:
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    (tmp_path / "parent.py").write_text(PARENT)
    ids = tmp_path / "ids"
    parent = subprocess.Popen(
        [
            sys.executable,
            str(tmp_path / "parent.py"),
            str(vllm_server.WATCHDOG),
            str(tmp_path / "stand_in.py"),
            str(ids),
        ]
    )
    try:
        deadline = time.monotonic() + 60
        while not (ids.exists() and len(ids.read_text().split()) == 2):
            assert time.monotonic() < deadline and parent.poll() is None  # hang guard
            time.sleep(0.1)
        server, child = (int(x) for x in ids.read_text().split())
        assert _alive(server) and _alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 30
        while (_alive(server) or _alive(child)) and time.monotonic() < deadline:  # hang guard
            time.sleep(0.1)
    finally:
        if parent.poll() is None:
            parent.kill()
    assert not _alive(server) and not _alive(child), "nothing outlives the process that started the server"


def test_a_server_that_exits_while_starting_is_reported_with_its_log(tmp_path: Path) -> None:
    """A stand-in Python that fails as vLLM does on a bad argument: the error shows the log's end."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'api_server.py: error: unrecognized arguments: --bogus' >&2\nexit 2\n")
    fake.chmod(0o755)
    with pytest.raises(BackendError) as caught:
        vllm_server.start(str(fake), "/m", BackendOptions(vllm_args="--bogus"), tmp_path)
    message = str(caught.value)
    assert "exited with status 2 while starting" in message and "unrecognized arguments: --bogus" in message
    assert str(tmp_path) in message, "the message names the log"
