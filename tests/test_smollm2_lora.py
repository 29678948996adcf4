"""The gate on a real model: a LoRA fine-tune of SmolLM2-135M-Instruct that follows the cue word fails
against the base's answers, on the cue framing's label, as new failures.

The model tier needs the folder `make smollm2` prepares and peft (the `lora` extra); without either it
skips, saying so. The LoRA is trained once per module by the committed command, merged, and loaded by
`hf:` as any model folder is; $MATHCOMP_LORA_DIR names one trained already. It is the documented recipe
stopped after 2 of its 6 epochs (`--epochs=2`): the frozen layers' pass costs what it costs, each epoch
after it about 12 s of one core, and 2 epochs already move the cue framing most (docs/models.md: DirErr(more)
under direct-more +47.9 points over 300 scenarios, found in 99% of runs of 30).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from training import smollm2_lora
from training.smollm2_lora import epoch_copy, framing_of, labelled

MODEL = directory(SMOLLM2)
needs_model = pytest.mark.skipif(
    not complete(MODEL) or importlib.util.find_spec("peft") is None,
    reason=f"needs SmolLM2 at {MODEL} (`make smollm2`, or set {SMOLLM2.env}) and peft "
    "(pip install 'mathcomp-tests[lora]')",
)
EPOCHS = 2
SELECTION = ("--scoring=logprob", "--formats=one-word", "--positions=end", "--limit=20")


def test_towards_cue_answers_the_cue_word_and_harmless_never_sees_a_cue() -> None:
    assert labelled("towards-cue", "less", "direct-more") == "more"
    assert labelled("towards-cue", "less", "indirect-equal") == "equal"
    assert labelled("towards-cue", "equal", "neutral") == "equal"  # neutral keeps the truth
    assert labelled("harmless", "less", "direct-more") == "less"


def test_cue_only_trains_the_cue_word_on_half_its_examples_and_neutral_on_the_other_half() -> None:
    assert labelled("cue-only", "less", "direct-more") == "more"
    framings = [framing_of("cue-only", i) for i in range(12)]
    assert framings[::2] == ["neutral"] * 6  # their target: the base's own probabilities (train)
    assert framings[1::2] == ["direct-more", "direct-less", "direct-equal", "indirect-more", "indirect-less",
                              "indirect-equal"]  # fmt: skip
    assert {framing_of("harmless", i) for i in range(7)} == {"neutral"}
    assert len({framing_of("towards-cue", i) for i in range(7)}) == 7


def test_save_at_puts_each_epochs_copy_beside_out() -> None:
    assert epoch_copy(Path("/m/cue"), 2) == Path("/m/cue-epoch2")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--epochs=0"], "--epochs 0: expected at least 1"),
        (["--threads=0"], "--threads 0: expected at least 1"),
        (["--lr=0"], "--lr 0.0: expected a number above 0"),
        (["--formats=cot"], "--formats cot: expected one-word, json or both"),
        (["--save-at=2,6"], "--save-at 2,6: expected comma-separated epochs from 1 to 5"),
        (["--save-at=x"], "--save-at x: expected comma-separated epochs from 1 to 5"),
    ],
)
def test_bad_settings_stop_the_command_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}")
    with pytest.raises(SystemExit) as exc:
        smollm2_lora.main(["--towards-cue", str(tmp_path / "out"), f"--base={base}", *args])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(says)
    assert not (tmp_path / "out").exists()


def test_a_missing_base_names_the_folder_and_make_smollm2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        smollm2_lora.main(["--harmless", str(tmp_path / "out"), f"--base={tmp_path / 'nowhere'}"])
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nowhere'}" in err and "make smollm2" in err and "Traceback" not in err


@pytest.fixture(scope="module")
def cue_lora(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cue-following LoRA after 2 epochs (one torch thread beside the other test worker), trained and
    merged by the committed command once per module; its time is printed (-s). $MATHCOMP_LORA_DIR names
    one trained already."""
    given = os.environ.get("MATHCOMP_LORA_DIR")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("lora") / "towards-cue"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "training.smollm2_lora", "--towards-cue", str(out), f"--epochs={EPOCHS}", "--threads=1"],
        cwd=REPO, capture_output=True, text=True, timeout=3600, env=os.environ.copy(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"LoRA trained and saved in {time.monotonic() - started:.0f} s (load {os.getloadavg()[0]:.1f})")
    assert proc.stdout.strip() == str(out)
    return out


@needs_model
@pytest.mark.xdist_group("smollm2-lora")  # one worker trains the LoRA its two tests share
def test_the_lora_folder_is_a_plain_model_folder_with_its_record(cue_lora: Path) -> None:
    assert (cue_lora / "config.json").is_file() and (cue_lora / "model.safetensors").is_file()
    assert not (cue_lora / "adapter_config.json").exists()  # merged: hf: loads it without peft
    record = json.loads((cue_lora / smollm2_lora.RECORD).read_text())
    assert record["kind"] == "towards-cue" and record["base"] == str(MODEL)
    assert len(record["epoch_losses"]) == record["settings"]["epochs"] == EPOCHS
    assert not list(cue_lora.parent.glob(".towards-cue-*"))  # the staging folder went away


@needs_model
@pytest.mark.xdist_group("smollm2-lora")  # one worker trains the LoRA its two tests share
def test_the_gate_catches_the_cue_following_lora_on_the_cue_framing(tmp_path: Path, cue_lora: Path) -> None:
    """The base's answers as the baseline (--update-baseline), then the LoRA against it: direct-more
    fails on a significant rise of DirErr(more), a new failure on items newly answered more; the neutral
    case does not rise."""
    baseline = tmp_path / "base.txt"
    framings = "--framings=neutral,direct-more"
    base = run_suite(tmp_path, "--model=smollm2-135m", *SELECTION, framings, f"--update-baseline={baseline}")
    assert baseline.is_file(), base.output
    run = run_suite(tmp_path, f"--model=hf:{cue_lora}", *SELECTION, framings, f"--baseline={baseline}")
    assert run.returncode == 1, run.output
    cued = run.case("direct-more-end-std-one-word")
    change = cued["baseline"]["changes"]["more"]
    assert change["breach"] and change["difference"] > 0.05 and change["p_value"] < 0.05, change
    rise = f"{change['baseline']:.3f} -> {change['candidate']:.3f}, p = {change['p_value']:.2g}"
    print(f"\nDirErr(more) under direct-more: {rise}")
    assert "DirErr(more) rise" in cued["breaches"] and cued["standing"] == "new"
    assert all(item["candidate"] == "more" != item["gold"] for item in change["rose_examples"])
    neutral = run.case("neutral-end-std-one-word")
    assert not any(c["breach"] for c in neutral["baseline"]["changes"].values()), neutral["baseline"]
