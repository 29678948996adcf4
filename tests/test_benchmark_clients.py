"""The client comparison of benchmarks/vllm_replicas.py: how vLLM's own client's passes are put together
(one process feeding both servers, or one process a server) and how the rounds are summed up."""

from __future__ import annotations

from typing import Any

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
