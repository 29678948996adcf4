"""--chat-template and sampling (--temperature, --samples) on a real tiny model and a real cache."""

from __future__ import annotations

from pathlib import Path

from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.backends.cache.store import cache_keys
from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.prompts import build, load_prompt_set, std_names
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import Condition, Decoding, Prompt


def _prompt() -> Prompt:
    prompt_set = load_prompt_set("hf")
    scenario = load(REPO / "fixtures" / "scenarios.csv")[0]
    return build(scenario, Condition("neutral", "end"), prompt_set, std_names(prompt_set))


def test_chat_template_none_sends_the_plain_prompt_and_keys_the_cache_apart(untrained_model: Path) -> None:
    prompt = _prompt()
    auto = HFBackend(str(untrained_model), BackendOptions(device="cpu"))
    plain = HFBackend(str(untrained_model), BackendOptions(device="cpu", chat_template="none"))
    assert plain.render(prompt) == prompt.text
    assert auto.render(prompt) != prompt.text and "<|assistant|>" in auto.render(prompt)
    decoding = Decoding(8)
    assert cache_keys(auto, [prompt], decoding) != cache_keys(plain, [prompt], decoding)
    answers = plain.complete([prompt], decoding)
    assert answers[0].error is None and answers[0].input_tokens == len(plain._encode([prompt.text])[0])


def test_seeds_enter_the_cache_key_only_when_sampling() -> None:
    assert Decoding(8).as_key() == {"max_new_tokens": 8, "temperature": 0.0}
    assert Decoding(8, 0.7, seed=2).as_key() == {"max_new_tokens": 8, "temperature": 0.7, "seed": 2}


def test_samples_are_distinct_cached_answers_with_mean_and_spread(
    tmp_path: Path, untrained_model: Path
) -> None:
    model = f"hf:{untrained_model}"
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(
        (REPO / "thresholds.toml").read_text() + f'\n[model."{model}"]\ndir_err = 1.0\ninvalid_rate = 1.0\n'
    )
    args = (
        f"--model={model}",
        "--limit=5",
        "--framings=neutral",
        "--positions=end",
        "--max-new-tokens=6",
        "--temperature=1.5",
        "--samples=3",
        "--device=cpu",
        f"--thresholds={thresholds}",
    )
    run = run_suite(tmp_path, *args)
    case = run.case("neutral-end-std-one-word")
    records = run.records
    # An untrained model's noise may hold no readable answer at all: such a case fails as "nothing read"
    # (test_read_nothing.py) whatever the ceilings; with one, these ceilings pass it.
    read_any = any(r["status"] == "ok" for r in records)
    assert case["error"] is None and case["passed"] is read_any, run.output
    assert run.returncode == (0 if read_any else 1), run.output
    assert read_any or case["breaches"] == ["nothing read"]
    assert case["sent"] == 15
    assert sorted(r["sample"] for r in records) == [0] * 5 + [1] * 5 + [2] * 5
    by_sample = [[r["raw"] for r in records if r["sample"] == k] for k in range(3)]
    assert len({tuple(s) for s in by_sample}) == 3, "three seeds give three different sets of answers"
    spread = case["samples"]
    assert spread["k"] == 3
    for y in ("less", "more", "equal"):
        if spread[y] is not None:
            assert abs(spread[y]["mean"] - case["scores"]["dir_err"][y]) < 1e-9
            assert spread[y]["min"] <= spread[y]["mean"] <= spread[y]["max"] and spread[y]["sd"] >= 0
    again = run_suite(tmp_path, *args)
    assert again.returncode == run.returncode, again.output
    assert again.summary["prompts_sent"] == 0
    assert [r["raw"] for r in again.records] == [r["raw"] for r in records]


def test_samples_without_a_temperature_are_refused(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--samples=3")
    assert run.returncode != 0 and "--samples above 1 needs --temperature above 0" in run.output
