"""The benchmark table: one row per measurement, built from the results ``python -m benchmarks`` collects,
written to reports/benchmarks/README.md and between two marker comments in docs/benchmarks.md (PAGE)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchmarks import (
    gate_power_report,
    multi_server,
    soft_test_level,
    vllm_replicas,
    vllm_startup_share,
    year_of_nights,
)

START = "<!-- benchmarks:start (written by `make bench`; edit benchmarks/table.py, not this table) -->"
END = "<!-- benchmarks:end -->"
PAGE = "docs/benchmarks.md"
"""The page, relative to the repository root, that holds the table between START and END."""
Row = tuple[str, str, str]
Result = Mapping[str, Any]


def _load(entry: Result) -> str:
    before, after = entry.get("load_before"), entry.get("load_after")
    if not before or not after:
        return ""
    return f" (load {before[0]} → {after[0]})"


def harness_overhead(r: Result) -> list[Row]:
    ours, per = r["ours"], r["ours_us_per_prompt"]
    med = ours["seconds_median"]
    rows: list[Row] = [
        (
            f"our harness, {r['prompts']:,} one-word prompts (112 cases) on the instant symbolic reference, pytest "
            "end to end incl. report: cold cache / warm / --no-cache / start-up alone",
            "`python -m benchmarks.harness_overhead`",
            f"{med['cold']:.2f} / {med['warm']:.2f} / {med['no-cache']:.2f} / {med['startup']:.2f} s = "
            f"{per['cold']:.0f} / {per['warm']:.0f} / {per['no-cache']:.0f} µs per prompt; cold is "
            f"{ours['cold_over_no_cache']:.2f}x no cache",
        )
    ]
    lm = r.get("lm_eval", {})
    if "wall_s_median" in lm:
        ratios = r["ratio_lm_eval_over_ours"]
        met = "met" if r.get("goal_10x_met") else "not met"
        rows.append(
            (
                f"lm-evaluation-harness {lm['version']} on the same {lm['requests']:,} prompts, an instant LM "
                "registered with its registry, `simple_evaluate` on a YAML task (whole command)",
                "the same",
                f"{lm['wall_s_median']:.2f} s = {r['lm_eval_us_per_prompt']:.0f} µs per prompt "
                f"({r['lm_eval_evaluate_only_us_per_prompt']:.0f} in `simple_evaluate` alone): ours is "
                f"{ratios['cold']:.1f}x / {ratios['warm']:.1f}x / {ratios['no-cache']:.1f}x lower per prompt "
                f"(cold / warm / no cache); goal 10x: {met}",
            )
        )
    else:
        rows.append(("lm-evaluation-harness overhead", "the same", _why(lm)))
    return rows


def hf_throughput(r: Result) -> list[Row]:
    def rate(key: str) -> str:
        return f"{r[key]['per_s']:.0f}" if key in r else "n/a"

    rows: list[Row] = [
        (
            f"hf backend, embedded model, {r['prompts']:,} one-word prompts on {r['device']}: generate whole matrix "
            "/ per case / one prompt at a time; label logprob whole matrix / per case",
            "`python -m benchmarks.hf_throughput`",
            f"{rate('generate_batched')} / {rate('generate_per_case')} / {rate('generate_single')} prompts/s; "
            f"{rate('logprob_batched')} / {rate('logprob_per_case')} prompts/s: automatic batch "
            f"{r['speedup_batched_vs_single']:.1f}x batch 1; logprob {r['speedup_logprob_vs_generate']:.2f}x generate",
        )
    ]
    lm = r.get("lm_eval", {})
    if "generate" in lm:
        gen = r["generate_batched"]["per_s"] / lm["generate"]["per_s"]
        ll = r["logprob_batched"]["per_s"] / lm["loglikelihood_3_labels"]["per_s"]
        per_case = f"; per case {lm['generate_per_case']['per_s']:.0f}" if "generate_per_case" in lm else ""
        rows.append(
            (
                f"the same through lm-evaluation-harness {lm['version']}'s HF backend (HFLM)",
                "the same (`--setup-lmeval` once)",
                f"generate_until {lm['generate']['per_s']:.0f} prompts/s{per_case} (ours {gen:.2f}x, same answers "
                f"{100 * lm['same_answers_as_ours']:.0f}%); loglikelihood over 3 labels "
                f"{lm['loglikelihood_3_labels']['per_s']:.0f} (our logprob {ll:.2f}x)",
            )
        )
    else:
        rows.append(("lm-evaluation-harness HF backend", "the same", _why(lm)))
    return rows


def api_concurrency(r: Result) -> list[Row]:
    runs, rows = r["runs"], []
    latency_ms = round(1000 * r["server_latency_s"])
    for name in ("router", "litellm.acompletion", "openai.AsyncOpenAI"):
        if name not in runs:
            continue
        cells = [
            f"c={c}: {v['median_s']:.2f} s ({v['median_ratio_to_ideal']:.2f}x ideal, "
            f"{v['client_cpu_ms_per_prompt']:.1f} ms CPU/prompt)"
            for c, v in runs[name].items()
        ]
        rows.append(
            (
                f"API fan-out, {r['prompts']:,} prompts, local server {latency_ms} ms latency: {name}"
                + (" (ours)" if name == "router" else ""),
                "`python -m benchmarks.api_concurrency`",
                "; ".join(cells)
                + ("; c=1 sent " + str(runs[name]["1"]["sent"]) + ", scaled" if "1" in runs[name] else ""),
            )
        )
    extra = [
        f"{name} c={c}: {v['median_s']:.2f} s"
        for name in ("router+cache", "2 processes")
        for c, v in runs.get(name, {}).items()
    ]
    extra += [
        f"{name}: {v['seconds']:.1f} s for {v['prompts']:,} prompts" for name, v in r.get("suite", {}).items()
    ]
    if extra:
        rows.append(
            (
                "API fan-out through the cache, over 2 processes, and the suite under pytest (start-up and "
                "report included)",
                "the same",
                "; ".join(extra),
            )
        )
    return rows


def xdist_memory(r: Result) -> list[Row]:
    rows = []
    for name, runs in r["suites"].items():
        cells = [
            f"{n}: {v['seconds']:.1f} s, {v['peak_rss_mib']:.0f} MiB{_load(v)}"
            for n, v in runs.items()
            if n.startswith("-n")
        ]
        rows.append(
            (
                f"xdist scaling and peak memory (process tree), {name} suite"
                + (" (quick)" if r.get("quick") else ""),
                "`python -m benchmarks.xdist_memory`",
                "; ".join(cells) + f"; -n 2 is {runs['speedup_n2_over_n1']:.2f}x -n 1",
            )
        )
    return rows


def plugin_startup(r: Result) -> list[Row]:
    collect = r.get("collect_full_matrix", {})
    return [
        (
            f"start-up: plugin import; collecting the full matrix; pytest on 30 unrelated tests with / without the "
            f"wheel ({r['runs']} interleaved runs)",
            "`python -m benchmarks.plugin_startup`",
            f"entry point {r['entry_point_import_ms']} ms, `mathcomp_tests.plugin` {r['suite_plugin_import_ms']} ms; "
            f"collection {collect.get('seconds_min', 'n/a')} s ({collect.get('pytest_says', '')}); unrelated tests "
            f"{r['with_plugin']['median_s']:.2f} / {r['without_plugin']['median_s']:.2f} s median",
        )
    ]


def gpu_qwen(r: Result) -> list[Row]:
    runs = r["runs"]
    cells = [f"{name}: {v['prompts_per_s']} prompts/s" for name, v in runs.items()]
    what = "GPU: Qwen2.5-3B-sized random model through the hf backend"
    if r.get("tiny"):
        return [
            (
                what + " — the CPU check of its path with a 2-layer model (an H200 run: below the table)",
                "`python -m benchmarks.gpu_qwen` (on a CUDA machine)",
                "tiny CPU path check (not a GPU figure): " + "; ".join(cells),
            )
        ]
    share = [
        f"{name}: {100 * v['share_of_peak']:.1f}% of peak"
        for name, v in runs.items()
        if v.get("share_of_peak")
    ]
    return [(what + f" on {r['device_name']}", "`python -m benchmarks.gpu_qwen`", "; ".join(cells + share))]


VLLM_AGREEMENT = {"hf": ("agree_with_batched", "vLLM's"), "logprob": ("agree_with_hf_logprob", "hf's")}
"""The vLLM benchmark's paths whose answers are compared with another's: the field, and whose answers."""


def vllm_throughput(r: Result) -> list[Row]:
    rows: list[Row] = []
    for scale, entry in r["scales"].items():
        offline, batched = entry["offline"], entry["batched"]
        cells = [
            f"offline LLM.generate {offline['prompts_per_s']:.0f} prompts/s",
            f"batched client {batched['prompts_per_s']:.0f} prompts/s = {batched['share_of_offline']:.2f}x offline, "
            f"{batched['client_cpu_ms_per_prompt']:.3f} ms client CPU/prompt",
        ]
        named = (
            ("per_case", "one call per case"),
            ("suite", "pytest"),
            ("router", "Router"),
            ("hf", "our hf backend, same weights"),
            ("logprob", "vLLM label logprob"),
            ("hf_logprob", "hf label logprob"),
        )
        for name, label in named:
            if name in entry:
                v = entry[name]
                cpu = v.get("client_cpu_ms_per_prompt", v.get("cpu_ms_per_prompt"))
                rate = f"{label} {v['prompts_per_s']:.0f} prompts/s = {v['share_of_offline']:.2f}x"
                key, whose = VLLM_AGREEMENT.get(name, ("", ""))
                same = f", {100 * v[key]:.1f}% the same as {whose}" if key in v else ""
                cells.append(
                    f"{rate}, {cpu:.{3 if cpu < 1 else 2}f} ms CPU/prompt"
                    + (f" ({v['prompts']:,} prompts)" if name == "router" else "")
                    + same
                )
        suite = entry.get("suite") or {}
        if suite.get("session_s"):
            cells.append(
                f"pytest's session alone (after start-up) {suite['session_s']:.1f} s = "
                f"{offline['seconds'] / suite['session_s']:.2f}x offline"
            )
        if suite.get("share_of_offline_with_tokenization"):
            cells.append(
                f"pytest {suite['share_of_offline_with_tokenization']:.2f}x of offline with its tokenization "
                f"timed ({offline['with_tokenization_prompts_per_s']:.0f} prompts/s)"
            )
        phases = suite.get("phases_s") or {}
        if phases.get("before the first prompt") is not None:
            cells.append(f"pytest's seconds: {', '.join(f'{k} {v:.2f}' for k, v in phases.items())}")
        judged = {"suite": "pytest end to end", "batched": "the batched client"}[
            entry.get("goals_judged_on", "batched")
        ]
        met = [
            f"0.8x {'met' if entry['goal_share_0_8_met'] else 'not met'}",
            f"<0.3 ms {'met' if entry['goal_cpu_0_3_ms_met'] else 'not met'} ({judged})",
        ]
        rows.append(
            (
                f"vLLM ({r['machine'].get('gpu') or 'CPU build'}): {offline['prompts']:,} one-word prompts "
                f"(scale {scale}), 8 new tokens, greedy",
                "`python -m benchmarks.vllm_throughput`",
                "; ".join(cells) + "; goals: " + ", ".join(met),
            )
        )
    return rows


def reader_speed(r: Result) -> list[Row]:
    sizes = [str(n) for n in r["sizes"]]
    cells = []
    for reader, entry in r["readers"].items():
        worst = max(entry["shapes"].items(), key=lambda item: item[1]["growth"])
        shape, s = worst
        per = s["us_per_1000_chars"]
        cells.append(
            f"{reader}: at most {s['growth']:.1f}x ({shape}: {per[sizes[0]]:.0f} → {per[sizes[-1]]:.0f} µs per "
            f"1,000 chars, {s['seconds_longest']:.2f} s for the longest)"
        )
    met = "met" if r["goal_met"] else "not met"
    return [
        (
            f"answer readers: time per character from {int(sizes[0]):,} to {int(sizes[-1]):,}-character answers "
            "(brace and bracket runs, prose, JSON objects in a row), growth = last / first",
            "`python -m benchmarks.reader_speed`",
            "; ".join(cells) + f"; goal growth under {r['goal_growth']:g}x: {met}",
        )
    ]


def batch_api(r: Result) -> list[Row]:
    cells = []
    for provider in dict.fromkeys(run["provider"] for run in r["runs"]):
        mine = {x["path"]: x for x in r["runs"] if x["provider"] == provider}
        live, batch = mine["live"], mine["batch"]
        cells.append(
            f"{provider}: live {live['wall_s']:.1f} s, {live['live_requests']:,} requests ({live['live_429']:,} "
            f"refused with 429); batch {batch['wall_s']:.1f} s, {batch['batches']} batch(es), "
            f"{batch['batch_endpoint_requests']} batch endpoint requests, {batch['live_requests']} live"
        )
    return [
        (
            f"--batch against the live path, {r['limit']} scenarios x 14 framings, fakes whose live endpoint allows "
            f"{r['rps']} requests a second and whose batches answer {r['batch_delay']:g} s after creation",
            "`python -m benchmarks.batch_api`",
            "; ".join(cells),
        )
    ]


COMPARED_ONLY = ("soft_split",)
"""interval_coverage measures these beside the printed intervals; the suite does not print them."""


def interval_coverage(r: Result) -> list[Row]:
    sizes = [str(n) for n in r["sizes"]]
    printed = [name for name in r["results"] if not name.endswith("_raw") and name not in COMPARED_ONLY]
    cells = [
        f"{name} " + " / ".join(f"{100 * r['results'][name][n]['mean']:.1f}" for n in sizes)
        + ("" if all(r["results"][name][n]["holds"] for n in sizes) else " (below the criterion somewhere)")
        for name in printed
    ]
    return [
        (
            f"coverage of the 95% intervals the suite prints, mean over a grid of true rates, "
            f"at n = {', '.join(sizes)} "
            f"({r['sims']} simulated data sets a point)",
            "`python -m benchmarks.interval_coverage`",
            "; ".join(cells) + " %",
        )
    ]


ROWS: dict[str, Callable[[Result], list[Row]]] = {
    "harness_overhead": harness_overhead,
    "hf_throughput": hf_throughput,
    "api_concurrency": api_concurrency,
    "xdist_memory": xdist_memory,
    "plugin_startup": plugin_startup,
    "gpu_qwen": gpu_qwen,
    "vllm_throughput": vllm_throughput,
    "reader_speed": reader_speed,
    "multi_server": multi_server.table_rows,
    "vllm_replicas": vllm_replicas.table_rows,
    "vllm_startup_share": vllm_startup_share.table_rows,
    "batch_api": batch_api,
    "interval_coverage": interval_coverage,
    "soft_test_level": soft_test_level.table_rows,
    "gate_power_smollm2": gate_power_report.table_rows,
    "year_of_nights": year_of_nights.table_rows,
}


def _why(entry: Result) -> str:
    return str(entry.get("skipped") or entry.get("failed") or "not run")[:300]


def rows(results: Result) -> list[Row]:
    """Every benchmark's rows in the driver's order; a failed or missing one gets a row saying so."""
    out: list[Row] = []
    for name, entry in results["benchmarks"].items():
        result = entry.get("result")
        if entry.get("returncode", 0) != 0 or not result:
            out.append(
                (name, f"`python -m benchmarks.{name}`", f"failed: {entry.get('error', 'no result')}"[:300])
            )
            continue
        try:
            made = ROWS[name](result) if name in ROWS else []
        except (KeyError, TypeError, ZeroDivisionError) as exc:
            made = [(name, f"`python -m benchmarks.{name}`", f"result incomplete: missing {exc}")]
        out += [(what, command, value + _load(entry)) for what, command, value in made]
    return out


def markdown(results: Result) -> str:
    """The table with a line naming the machine and the date above it."""
    m = results["machine"]
    how = (
        "collected by `python -m benchmarks --collect` from each benchmark's last output"
        if results.get("collected")
        else f"measured by `make bench{' ARGS=--quick' if results.get('quick') else ''}` "
        f"in {results['total_s'] / 60:.1f} min"
    )
    header = (
        f"{results['date']}, {how}, on {m['cpu']}, {m['cores']} cores, {m['ram_gib']} GiB, "
        f"GPU: {m['gpu'] or 'none'}; Python {m['python']}, "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
        + f". Load average {results['load_before'][0]} before, {results['load_after'][0]} after "
        "(the machine is shared; each row shows the 1-minute load before → after it)."
    )
    lines = [header, "", "| what | command | result |", "|---|---|---|"]
    for what, command, value in rows(results):
        lines.append(f"| {_cell(what)} | {_cell(command)} | {_cell(value)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def replace_between(text: str, block: str) -> str:
    """``text`` with whatever stands between START and END replaced by ``block``; an error when either is
    missing or out of order, so a page edited by hand is never overwritten blindly."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < 0 or end < start:
        raise ValueError(f"{PAGE} needs the markers {START!r} and {END!r}, in that order")
    return text[: start + len(START)] + "\n" + block.rstrip("\n") + "\n" + text[end:]
