"""The client comparison of benchmarks/vllm_replicas.py: how vLLM's own client's passes are put together
(one process feeding both servers, or one process a server) and how the rounds are summed up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import vllm_replicas, vllm_serve_client


def _part(concurrency: int, seconds: float, cpu: float, texts: list[list[str]]) -> dict[str, Any]:
    return {
        "concurrency": concurrency,
        "seconds": seconds,
        "client_cpu_s": cpu,
        "per_server": [{"completed": len(t), "duration": seconds, "errors": 0, "texts": t} for t in texts],
    }


def test_one_process_a_server_is_timed_by_the_slowest_and_charged_every_process_s_cpu() -> None:
    # prompts p0..p5 over two servers: server 0 took p0, p2, p4 and server 1 p1, p3, p5
    parts = [_part(64, 2.0, 0.3, [["a0", "a2", "a4"]]), _part(64, 3.0, 0.6, [["a1", "a3", "a5"]])]
    got = vllm_serve_client._joined(parts, [[0], [1]], 6)
    assert got["texts"] == ["a0", "a1", "a2", "a3", "a4", "a5"]
    assert (got["seconds"], got["prompts_per_s"], got["processes"]) == (3.0, 2.0, 2)
    assert got["client_cpu_s"] == 0.9 and got["client_cpu_ms_per_prompt"] == 150.0


def test_one_process_feeding_both_servers_keeps_the_prompts_order() -> None:
    got = vllm_serve_client._joined([_part(256, 1.5, 0.2, [["a0", "a2"], ["a1", "a3"]])], [[0, 1]], 4)
    assert got["texts"] == ["a0", "a1", "a2", "a3"]
    assert (got["concurrency"], got["processes"], got["errors"]) == (256, 1, 0)


def _pass(processes: int, concurrency: int, rate: float) -> dict[str, Any]:
    return {"processes": processes, "concurrency": concurrency, "prompts_per_s": rate,
            "client_cpu_ms_per_prompt": 1.0, "errors": 0}  # fmt: skip


def test_the_pool_is_set_against_the_best_setting_of_vllm_s_client_by_median() -> None:
    result: dict[str, Any] = {
        "batched_runs": [
            {"prompts_per_s": 400.0, "client_cpu_ms_per_prompt": 0.1},
            {"prompts_per_s": 500.0, "client_cpu_ms_per_prompt": 0.08},
        ],
        "router_runs": [
            {"prompts_per_s": 40.0, "client_cpu_ms_per_prompt": 9.0},
            {"prompts_per_s": 44.0, "client_cpu_ms_per_prompt": 10.0},
        ],
        # setting 1p-64 has the best single round (330), 2p-64 the best median (300)
        "vllm_client_runs": [
            [_pass(1, 64, 330.0), _pass(2, 64, 290.0)],
            [_pass(1, 64, 250.0), _pass(2, 64, 310.0)],
        ],
    }
    vllm_replicas.summarise(result)
    assert result["batched"]["median_prompts_per_s"] == 450.0 and result["batched"]["prompts_per_s"] == 500.0
    assert result["vllm_client"]["best_setting"] == "2p-64"
    assert result["vllm_client"]["median_prompts_per_s"] == 300.0
    assert result["pool_vs_vllm_client"] == {"median": 1.5, "best": round(500 / 330, 3)}
    assert result["goal_0_95_met"] is True


def _waiter(ready: Path, go: Path) -> subprocess.Popen[str]:
    """A process that makes ``ready`` and waits for ``go``: exits 0 once it is there, 3 after 60 s without it."""
    script = (
        "import pathlib, sys, time\n"
        f"pathlib.Path({str(ready)!r}).touch()\n"
        "deadline = time.monotonic() + 60\n"
        f"while not pathlib.Path({str(go)!r}).exists() and time.monotonic() < deadline:  # hang guard\n"
        "    time.sleep(0.01)\n"
        f"sys.exit(0 if pathlib.Path({str(go)!r}).exists() else 3)\n"
    )
    return subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)


def test_processes_are_let_go_once_every_one_is_ready(tmp_path: Path) -> None:
    ready, go = [tmp_path / "ready-0", tmp_path / "ready-1"], tmp_path / "go"
    procs = [_waiter(r, go) for r in ready]
    vllm_serve_client.release_together(procs, ready, go, "failed")
    assert go.exists() and [p.wait(60) for p in procs] == [0, 0]


def test_a_process_that_ends_before_it_is_ready_stops_the_benchmark_with_its_error(tmp_path: Path) -> None:
    go = tmp_path / "go"
    dead = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.exit('no engine here')"], stderr=subprocess.PIPE, text=True
    )
    waiting = _waiter(tmp_path / "ready-1", go)
    with pytest.raises(SystemExit, match="an engine failed to start:\n(.|\n)*no engine here"):
        ready = [tmp_path / "ready-0", tmp_path / "ready-1"]
        vllm_serve_client.release_together([dead, waiting], ready, go, "an engine failed to start")
    assert not go.exists() and waiting.wait(60) != 0
