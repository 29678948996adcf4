"""The benchmark driver's table: built from a hand-made results dict, merged into docs/benchmarks.md between
markers. No benchmark runs here and no time is asserted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks import table

REPO = Path(__file__).resolve().parents[1]

MACHINE = {
    "cpu": "Test CPU",
    "cores": 2,
    "ram_gib": 24.0,
    "gpu": None,
    "python": "3.11.7",
    "versions": {"torch": "2.13.0", "transformers": "5.23.0", "litellm": None},
}


def results(**benchmarks: Any) -> dict[str, Any]:
    return {
        "date": "2026-11-21",
        "quick": False,
        "machine": MACHINE,
        "load_before": [1.5, 1.0, 1.0],
        "load_after": [2.5, 1.0, 1.0],
        "total_s": 900.0,
        "benchmarks": benchmarks,
    }


OVERHEAD = {
    "prompts": 33600,
    "ours": {
        "seconds_median": {"startup": 1.0, "cold": 6.72, "warm": 6.0, "no-cache": 5.0},
        "cold_over_no_cache": 1.34,
    },
    "ours_us_per_prompt": {"cold": 200.0, "warm": 178.6, "no-cache": 148.8},
    "lm_eval": {"version": "0.4.13", "requests": 33600, "wall_s_median": 67.2, "evaluate_s_median": 50.0},
    "lm_eval_us_per_prompt": 2000.0,
    "lm_eval_evaluate_only_us_per_prompt": 1488.1,
    "ratio_lm_eval_over_ours": {"cold": 10.0, "warm": 11.2, "no-cache": 13.44},
    "goal_10x_met": True,
}


def test_rows_carry_the_numbers_and_the_load_of_each_benchmark() -> None:
    entry = {"returncode": 0, "load_before": [3.0, 1, 1], "load_after": [4.0, 1, 1], "result": OVERHEAD}
    made = table.rows(results(harness_overhead=entry))
    assert len(made) == 2
    ours, theirs = made
    assert "6.72 / 6.00 / 5.00 / 1.00 s" in ours[2] and "200 / 179 / 149 µs per prompt" in ours[2]
    assert "10.0x / 11.2x / 13.4x lower" in theirs[2] and "goal 10x: met" in theirs[2]
    assert all(row[2].endswith("(load 3.0 → 4.0)") for row in made)


def test_a_failed_or_incomplete_benchmark_gets_a_row_saying_so() -> None:
    failed = {"returncode": 1, "error": "RuntimeError: no server"}
    broken = {"returncode": 0, "result": {"prompts": 10}}
    made = table.rows(results(api_concurrency=failed, harness_overhead=broken))
    assert made[0][0] == "api_concurrency" and "failed: RuntimeError: no server" in made[0][2]
    assert made[1][0] == "harness_overhead" and made[1][2].startswith("result incomplete: missing 'ours'")


def test_lm_eval_missing_is_reported_not_dropped() -> None:
    skipped = {**OVERHEAD, "lm_eval": {"skipped": "no benchmarks/.venv-lmeval"}}
    made = table.rows(results(harness_overhead={"returncode": 0, "result": skipped}))
    assert made[1][2] == "no benchmarks/.venv-lmeval"


def test_markdown_names_the_machine_and_escapes_cells() -> None:
    entry = {"returncode": 1, "error": "a | b"}
    text = table.markdown(results(xdist_memory=entry))
    assert text.startswith(
        "2026-11-21, measured by `make bench` in 15.0 min, on Test CPU, 2 cores, 24.0 GiB, GPU: none"
    )
    assert "torch 2.13.0, transformers 5.23.0." in text and "litellm" not in text
    assert "failed: a \\| b" in text
    assert text.count("\n| ") == 2  # header and one row


def test_the_block_is_replaced_between_the_markers_only() -> None:
    page = f"# Benchmarks\n\nintro\n{table.START}\nold table\n{table.END}\nafter\n"
    once = table.replace_between(page, "| new |\n")
    assert once == f"# Benchmarks\n\nintro\n{table.START}\n| new |\n{table.END}\nafter\n"
    assert table.replace_between(once, "| new |") == once


@pytest.mark.parametrize(
    "text", ["no markers", f"{table.START} only the start", f"{table.END} before {table.START}"]
)
def test_a_page_without_both_markers_in_order_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=f"{table.PAGE} needs the markers"):
        table.replace_between(text, "x")


def test_the_benchmarks_page_holds_the_table_that_make_bench_last_wrote() -> None:
    """make bench writes the same table into reports/benchmarks/README.md and between the page's markers;
    the page must have both markers (or make bench stops) and README.md must have none."""
    page = (REPO / table.PAGE).read_text()
    start, end = page.index(table.START), page.index(table.END)
    assert start < end
    generated = (REPO / "reports" / "benchmarks" / "README.md").read_text()
    assert page[start + len(table.START) + 1 : end] == generated.removeprefix("# Benchmarks\n\n")
    assert table.replace_between(page, generated.removeprefix("# Benchmarks\n\n")) == page
    assert table.START not in (REPO / "README.md").read_text()


VLLM = {
    "machine": {"gpu": None},
    "scales": {
        "1": {
            "offline": {"prompts": 4200, "seconds": 30.0, "prompts_per_s": 140.0},
            "batched": {
                "prompts": 4200,
                "prompts_per_s": 126.0,
                "share_of_offline": 0.9,
                "client_cpu_ms_per_prompt": 0.093,
            },
            "router": {
                "prompts": 1000,
                "prompts_per_s": 20.0,
                "share_of_offline": 0.143,
                "client_cpu_ms_per_prompt": 6.1,
            },
            "hf": {
                "prompts": 4200,
                "prompts_per_s": 70.0,
                "share_of_offline": 0.5,
                "client_cpu_ms_per_prompt": 25.0,
                "agree_with_batched": 1.0,
            },
            "goal_share_0_8_met": True,
            "goal_cpu_0_3_ms_met": True,
        }
    },
}


def test_the_vllm_row_sets_the_batched_client_against_the_offline_engine() -> None:
    entry = {"returncode": 0, "load_before": [3.0, 1, 1], "load_after": [4.0, 1, 1], "result": VLLM}
    (row,) = table.rows(results(vllm_throughput=entry))
    assert "4,200 one-word prompts" in row[0] and "CPU build" in row[0]
    assert "offline LLM.generate 140 prompts/s" in row[2] and "0.90x offline, 0.093 ms client CPU/prompt" in row[2]
    assert "Router 20 prompts/s = 0.14x, 6.10 ms CPU/prompt (1,000 prompts)" in row[2]
    assert "our hf backend, same weights 70 prompts/s = 0.50x, 25.00 ms CPU/prompt, 100.0% the same as vLLM's" in row[2]
    assert "goals: 0.8x met, <0.3 ms met" in row[2]


def test_the_vllm_goals_are_judged_on_the_suite_where_it_ran() -> None:
    scale = dict(VLLM["scales"]["1"])  # type: ignore[index]
    scale["suite"] = {
        "prompts": 4200,
        "seconds": 40.0,
        "prompts_per_s": 105.0,
        "share_of_offline": 0.75,
        "cpu_ms_per_prompt": 0.9,
        "session_s": 32.0,
    }
    scale.update(goals_judged_on="suite", goal_share_0_8_met=False, goal_cpu_0_3_ms_met=False)
    result = {**VLLM, "scales": {"1": scale}}
    entry = {"returncode": 0, "load_before": [3.0, 1, 1], "load_after": [4.0, 1, 1], "result": result}
    (row,) = table.rows(results(vllm_throughput=entry))
    assert "pytest 105 prompts/s = 0.75x, 0.900 ms CPU/prompt" in row[2]
    assert "pytest's session alone (after start-up) 32.0 s = 0.94x offline" in row[2]
    assert "goals: 0.8x not met, <0.3 ms not met (pytest end to end)" in row[2]


def _shape(first: float, last: float, seconds: float) -> dict[str, Any]:
    return {
        "us_per_1000_chars": {"2000": first, "512000": last},
        "seconds_longest": seconds,
        "growth": round(last / first, 2),
    }


READERS = {
    "sizes": [2000, 512000],
    "goal_growth": 3.0,
    "goal_met": False,
    "readers": {
        "json": {
            "worst_growth": 1.4,
            "shapes": {"bracket run": _shape(50, 70, 0.0358), "braces then an object": _shape(90, 99, 0.05)},
        },
        "cot": {"worst_growth": 4.0, "shapes": {"prose naming both persons": _shape(10, 40, 0.02)}},
    },
}


def test_the_reader_row_names_each_readers_worst_shape_and_the_goal() -> None:
    entry = {"returncode": 0, "load_before": [1.0, 1, 1], "load_after": [1.0, 1, 1], "result": READERS}
    (row,) = table.rows(results(reader_speed=entry))
    assert "from 2,000 to 512,000-character answers" in row[0]
    assert "json: at most 1.4x (bracket run: 50 → 70 µs per 1,000 chars, 0.04 s for the longest)" in row[2]
    assert "cot: at most 4.0x (prose naming both persons" in row[2]
    assert "goal growth under 3x: not met" in row[2]


def test_the_batch_row_sets_each_provider_s_live_path_against_its_batch_path() -> None:
    def run(provider: str, path: str, wall: float, live: int, refused: int) -> dict[str, object]:
        batches = 0 if path == "live" else 1
        return {"provider": provider, "path": path, "wall_s": wall, "live_requests": live, "live_429": refused,
                "batches": batches, "batch_endpoint_requests": 9 * batches}

    result = {"limit": 20, "rps": 5, "batch_delay": 5.0, "runs": [
        run("openai", "live", 92.5, 828, 548), run("openai", "batch", 10.8, 0, 0),
        run("anthropic", "live", 91.8, 807, 527), run("anthropic", "batch", 10.6, 0, 0),
    ]}
    ((what, _, value),) = table.batch_api(result)
    assert "5 requests a second" in what and "20 scenarios" in what
    assert value.startswith("openai: live 92.5 s, 828 requests (548 refused with 429); batch 10.8 s, 1 batch(es)")
    assert "anthropic: live 91.8 s, 807 requests (527 refused with 429); batch 10.6 s" in value


REPLICAS = {
    "cores": [0, 1],
    "prompts": 8400,
    "load_before": [0.6, 1, 1],
    "load_after": [2.5, 1, 1],
    "offline": {
        "cores": [
            {"core": 0, "prompts_per_s": 137.7, "with_tokenization_prompts_per_s": 130.5},
            {"core": 1, "prompts_per_s": 160.1, "with_tokenization_prompts_per_s": 149.6},
        ],
        "summed_prompts_per_s": 297.8,
        "summed_with_tokenization_prompts_per_s": 280.1,
    },
    "batched": {
        "prompts": 8400,
        "prompts_per_s": 244.0,
        "rates": [226.4, 244.0],
        "median_prompts_per_s": 235.2,
        "client_cpu_ms_per_prompt": 0.2,
        "median_client_cpu_ms_per_prompt": 0.236,
        "per_server": [4096, 4304],
        "agree_with_offline": 1.0,
        "share_of_offline": 0.79,
        "share_of_offline_with_tokenization": 0.84,
    },
    "router": {
        "prompts": 300,
        "prompts_per_s": 23.0,
        "median_prompts_per_s": 22.0,
        "share_of_offline_with_tokenization": 0.079,
    },
    "goal_0_9_met": False,
    "batched_runs": [{}, {}],
    "vllm_client": {
        "sweep": {
            "1p-64": {"median_prompts_per_s": 150.0},
            "2p-64": {"median_prompts_per_s": 160.4},
        },
        "best_setting": "2p-64",
        "median_prompts_per_s": 160.4,
        "client_cpu_ms_per_prompt": 0.98,
    },
    "vllm_client_answers_agree_with_batched": {"1p-64": 1.0, "2p-64": 0.995},
    "pool_vs_vllm_client": {"median": 1.466, "best": 1.5},
    "goal_0_95_met": True,
}


def test_the_replicas_row_sets_the_pool_against_one_offline_engine_per_core() -> None:
    entry = {"returncode": 0, "load_before": [0.6, 1, 1], "load_after": [2.5, 1, 1], "result": REPLICAS}
    row, client = table.rows(results(vllm_replicas=entry))
    assert "two vLLM CPU servers pinned to cores [0, 1], 8,400 one-word prompts" in row[0]
    assert "130 + 150 = 280 prompts/s (298 on token ids)" in row[2]
    assert "batched pool 235 prompts/s (median of 2: 226 and 244) = 0.84x (0.79x of token ids)" in row[2]
    assert "0.236 ms client CPU/prompt, servers took [4096, 4304], 100.0% the same as offline" in row[2]
    assert "Router 22 prompts/s = 0.08x (300 prompts); goal 0.9x not met" in row[2]
    assert "our pool vs vLLM's own serving benchmark client" in client[0]
    assert "our pool 235 (0.236 ms client CPU/prompt)" in client[2]
    assert "(1 proc. x 64: 150, 2 proc. x 64: 160), best 160 at 2 proc. x 64" in client[2]
    assert "(0.980 ms client CPU/prompt, 99.5% the same answers)" in client[2]
    assert "pool / vLLM's client 1.47x (best rounds 1.50x); goal 0.95x met" in client[2]


def test_the_startup_share_row_gives_the_median_and_spread_of_the_pairs() -> None:
    from benchmarks import vllm_startup_share

    pairs = [
        {"offline": {"prompts_per_s": o, "with_tokenization_prompts_per_s": o - 20}, "suite": {"prompts_per_s": u},
         "share": round(u / o, 3), "share_with_tokenization": round(u / (o - 20), 3)}
        for o, u in ((300.0, 240.0), (320.0, 200.0), (340.0, 255.0))
    ]
    result = {"prompts": 4200, "pairs": pairs, "load_before": [0.5], "load_after": [1.5]}
    vllm_startup_share.summarise(result)
    assert result["share"] == {"median": 0.75, "min": 0.625, "max": 0.8}
    (row,) = vllm_startup_share.table_rows(result)
    assert "3 alternated runs" in row[0] and "(load 0.5 → 1.5)" in row[0]
    assert row[2].startswith("offline 320 (300 to 340) prompts/s; suite 240 (200 to 255) prompts/s; share 0.75x")


def test_the_vllm_row_says_where_pytest_s_seconds_went() -> None:
    from benchmarks import startup_marks

    written = {
        "marks": {
            "process_start": 100.0,
            "plugin_imported": 100.5,
            "configure_start": 101.2,
            "configure_end": 102.7,
            "collection_start": 102.7,
            "collection_end": 103.0,
            "first_prompt_sent": 103.1,
            "last_case_end": 130.0,
            "sessionfinish_start": 130.1,
            "sessionfinish_end": 131.0,
            "exit": 131.2,
        },
        "spent_s": {"tokenizer load": 1.1424},
    }
    phases = startup_marks.phases(written)
    assert phases["phases_s"]["before the first prompt"] == 3.1
    assert phases["phases_s"]["collection"] == 0.3 and phases["inside_s"] == {"tokenizer load": 1.142}
    missing = startup_marks.phases({"marks": {"configure_start": 1.0, "configure_end": 2.5}, "spent_s": {}})
    assert missing["phases_s"] == {"run set-up (settings, dataset, backend, tokenizer, probe)": 1.5}
    scale = dict(VLLM["scales"]["1"])  # type: ignore[index]
    scale["offline"] = {**scale["offline"], "with_tokenization_prompts_per_s": 131.0}
    scale["suite"] = {
        "prompts": 4200,
        "prompts_per_s": 130.0,
        "share_of_offline": 0.93,
        "share_of_offline_with_tokenization": 0.99,
        "cpu_ms_per_prompt": 1.4,
        **phases,
    }
    entry = {"returncode": 0, "load_before": [3.0, 1, 1], "load_after": [4.0, 1, 1]}
    (row,) = table.rows(results(vllm_throughput={**entry, "result": {**VLLM, "scales": {"1": scale}}}))
    assert "pytest 0.99x of offline with its tokenization timed (131 prompts/s)" in row[2]
    assert "before the first prompt 3.10" in row[2] and "collection 0.30" in row[2]
