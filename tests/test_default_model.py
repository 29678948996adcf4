"""The embedded default model: how it is trained (never on the fixtures, deterministically) and what it shows."""

from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.backends.local.hf import HFBackend
from mathcomp_tests.backends.model_files import fingerprint
from mathcomp_tests.data.equations import compare, evaluate
from mathcomp_tests.data.generated_sets import drawn
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, LABELS
from training.examples import cue, examples
from training.train_default import Config, Phase, train, weights_digest

MODEL = "fixtures/models/mathcomp-tiny"
SPEC = f"hf:{MODEL}"
VLLM_CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
"""vLLM 0.32's CPU attention (``CPUAttentionBackend.get_supported_head_sizes``)."""


def test_training_scenarios_are_exact_reproducible_and_never_the_fixtures() -> None:
    labels = [LABELS[i % 3] for i in range(150)]
    one, two = random.Random(5), random.Random(5)
    first = [drawn(one, y, plain_only=i % 2 == 0) for i, y in enumerate(labels)]
    again = [drawn(two, y, plain_only=i % 2 == 0) for i, y in enumerate(labels)]
    assert [s.text_a + s.text_b for s in first] == [s.text_a + s.text_b for s in again]
    assert list(examples(20, seed=9, cue_share=0.6)) == list(examples(20, seed=9, cue_share=0.6))
    for s in again:
        assert compare(evaluate(s.expr_a), evaluate(s.expr_b)) == s.label
    assert set(Counter(s.label for s in again)) == set(LABELS)
    fixture_sentences = {t for s in load(REPO / "fixtures" / "scenarios.csv") for t in (s.text_a, s.text_b)}
    assert not fixture_sentences & {t for s in again for t in (s.text_a, s.text_b)}


def test_training_answers_are_true_and_cue_framings_meet_their_cue_more_often() -> None:
    data = list(examples(1400, seed=3, cue_share=0.6))
    for e in data[:60]:
        assert e.label in e.answer
    by_framing = {f: [e for e in data if e.framing == f] for f in FRAMINGS}
    neutral = Counter(e.label for e in by_framing["neutral"])
    assert max(neutral.values()) / len(by_framing["neutral"]) < 0.45
    for framing in FRAMINGS[1:]:
        share = sum(e.label == cue(framing) for e in by_framing[framing]) / len(by_framing[framing])
        assert 0.5 < share < 0.7, framing


def test_training_is_deterministic(tmp_path: Path) -> None:
    phases = (Phase(24, 1 / 3, 0.9), Phase(16, 0.6, 0.5))
    tiny = Config(
        phases=phases, heldout=14, steps=6, batch_size=8, vocab_size=400, hidden=32, heads=4, layers=1
    )
    train(tiny, tmp_path / "a", log=lambda _: None)
    train(tiny, tmp_path / "b", log=lambda _: None)
    assert fingerprint(tmp_path / "a") == fingerprint(tmp_path / "b")
    assert (tmp_path / "a" / "model.safetensors").exists() and (tmp_path / "a" / "README.md").exists()


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the pinned kernels are x86-64's")
def test_the_training_command_pins_the_float_kernels_before_torch_loads() -> None:
    probe = (
        "from training.train_default import pin_kernels; assert pin_kernels(); import torch; "
        "print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads())"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["AVX2", "1"]


def test_the_embedded_model_is_small_and_self_contained() -> None:
    directory = REPO / MODEL
    config = json.loads((directory / "config.json").read_text())
    assert config["model_type"] == "llama"
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    assert head_dim in VLLM_CPU_HEAD_SIZES, "vLLM's CPU build could not serve it"
    assert Config.hidden // Config.heads == head_dim, "the training command builds the shipped shape"
    assert (directory / "tokenizer.json").exists() and (directory / "training.json").exists()
    assert sum(f.stat().st_size for f in directory.iterdir()) < 8_000_000


def test_a_relative_model_directory_is_found_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    backend = HFBackend(MODEL, BackendOptions(device="cpu"))
    assert backend.directory == REPO / MODEL and backend.revision == fingerprint(REPO / MODEL)


def test_the_embedded_model_answers_leans_towards_the_cue_and_passes_its_ceilings(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path, f"--model={SPEC}", "--positions=begin", "--generated=50", generated=True, timeout=1500
    )
    assert run.returncode == 0, run.output
    cases = {c["framing"]: c["scores"] for c in run.summary["cases"]}
    assert all(scores["invalid_rate"] <= 0.05 for scores in cases.values())
    for label in ("more", "less"):
        for framing in (f"direct-{label}", f"indirect-{label}"):
            assert cases[framing]["dir_err"][label] > cases["neutral"]["dir_err"][label] + 0.05, (
                framing,
                cases,
            )
    assert cases["neutral"]["dir_err"]["equal"] > 0.3, "when it cannot tell, it says equal"


@pytest.mark.skipif(not os.environ.get("MATHCOMP_RETRAIN"), reason="set MATHCOMP_RETRAIN=1 (about 5 minutes)")
def test_a_model_retrained_with_the_shipped_command_passes_the_ceilings_shipped_for_it(
    tmp_path: Path,
) -> None:
    """What a user who retrains relies on, on any machine: the same verdicts; on an x86-64 CPU with AVX2
    and the same torch build, the same weights too (the command pins the float kernels)."""
    out = tmp_path / "retrained"
    command = [sys.executable, "-m", "training.train_default", "--out", str(out)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, timeout=3000)
    shipped_report = json.loads((REPO / MODEL / "training.json").read_text())
    report = json.loads((out / "training.json").read_text())
    assert report["environment"]["cpu_capability"] == "AVX2", "the command pins torch's kernels to AVX2"
    same_build = report["environment"]["torch"] == shipped_report["environment"]["torch"]
    if same_build and platform.machine() in ("x86_64", "AMD64"):
        assert report["weights_sha256"] == shipped_report["weights_sha256"] == weights_digest(REPO / MODEL)
        assert report["final_loss"] == shipped_report["final_loss"]
    shipped = (REPO / "thresholds.toml").read_text()
    section = f'model."{SPEC}"'
    assert section in shipped
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(shipped.replace(section, f'model."hf:{out}"'))
    run = run_suite(tmp_path, f"--model=hf:{out}", f"--thresholds={thresholds}", generated=True)
    assert run.returncode == 0, run.output
