"""The suite through a real local transformers model (`--model=hf:<dir>`), built and trained by the test."""

from __future__ import annotations

from pathlib import Path

from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.backends.model_files import fingerprint
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.prompts import build, load_prompt_set, std_names
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, Condition, Decoding

SCENARIOS = load(REPO / "fixtures" / "scenarios.csv")


def _gold_share(label: str, ids: list[str]) -> float:
    """The share of ``label`` among the scenarios a run drew (--limit draws in proportion, not the first N)."""
    rows = [s for s in SCENARIOS if s.id in set(ids)]
    assert len(rows) == len(ids)
    return sum(s.label == label for s in rows) / len(rows)


def test_a_model_that_always_says_more_fails_with_dirErr_more_of_one(
    tmp_path: Path, always_more_model: Path
) -> None:
    run = run_suite(
        tmp_path,
        f"--model=hf:{always_more_model}",
        "--limit=12",
        "--framings=neutral,direct-less",
        "--positions=end",
        "--batch-size=5",
    )
    assert run.returncode == 1, run.output
    assert "DirErr(more ) = 1.000 > 0.200" in run.output and "three wrong items:" in run.output
    summary = run.summary
    assert summary["revision"] == fingerprint(always_more_model)
    for case in summary["cases"]:
        scores = case["scores"]
        assert scores["dir_err"] == {"less": 0.0, "more": 1.0, "equal": 0.0}
        assert scores["accuracy"] == _gold_share("more", run.summary["scenario_ids"])
        assert scores["invalid_rate"] == 0.0
        assert case["breaches"] == ["DirErr(more)"] and case["sent"] == 12
    assert {r["raw"] for r in run.records} == {"more"} and len(run.records) == 24


def test_model_thresholds_override_the_default(tmp_path: Path, always_more_model: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(
        (REPO / "thresholds.toml").read_text()
        + f'\n[model."hf:{always_more_model}"]\ndir_err = {{ more = 1.0 }}\n'
    )
    run = run_suite(
        tmp_path,
        f"--model=hf:{always_more_model}",
        "--limit=6",
        "--framings=direct-more",
        f"--thresholds={thresholds}",
    )
    assert run.returncode == 0, run.output
    assert [c["ceilings"]["dir_err"]["more"] for c in run.summary["cases"]] == [1.0, 1.0]


def test_a_second_identical_run_makes_no_model_calls(tmp_path: Path, always_more_model: Path) -> None:
    args = (f"--model=hf:{always_more_model}", "--limit=10", "--framings=indirect-equal", "--positions=begin")
    first = run_suite(tmp_path, *args)
    second = run_suite(tmp_path, *args)
    assert first.summary["prompts_sent"] == 10 and not any(r["cached"] for r in first.records)
    assert second.summary["prompts_sent"] == 0 and all(r["cached"] for r in second.records)
    assert [r["raw"] for r in first.records] == [r["raw"] for r in second.records]
    changed = run_suite(tmp_path, *args, "--max-new-tokens=6")
    assert changed.summary["prompts_sent"] == 10, "decoding settings are part of the cache key"


def test_left_padded_batches_decode_exactly_like_single_prompts(
    tmp_path: Path, untrained_model: Path
) -> None:
    prompt_set = load_prompt_set("hf")
    prompts = [
        build(s, Condition(f, "end"), prompt_set, std_names(prompt_set))
        for s, f in zip(SCENARIOS[:14], FRAMINGS * 2, strict=True)
    ]
    assert len({len(p.text) for p in prompts}) > 5, "the batch must mix prompt lengths"
    decoding = Decoding(max_new_tokens=6)
    batched = HFBackend(str(untrained_model), BackendOptions(device="cpu", batch_size=7)).complete(
        prompts, decoding
    )
    single = HFBackend(str(untrained_model), BackendOptions(device="cpu", batch_size=1)).complete(
        prompts, decoding
    )
    assert [r.text for r in batched] == [r.text for r in single]
    assert len({r.text for r in single}) > 1, "an untrained model should not answer everything alike"
