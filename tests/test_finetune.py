"""`python -m training.finetune`: a few more steps on the demo model with the project's own training loss,
deterministic, saved as a model transformers loads and the suite can be pointed at."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.suite_runner import REPO

from training import finetune
from training.train_default import weights_digest

BASE = REPO / "fixtures" / "models" / "mathcomp-tiny"


def test_a_few_steps_give_a_model_that_loads_differs_from_its_base_and_repeats(tmp_path: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    settings = finetune.FineTune(steps=3, heldout=20, cue_share=0.95)
    record = finetune.finetune(BASE, tmp_path / "a", settings, log=lambda _: None)
    again = finetune.finetune(BASE, tmp_path / "b", settings, log=lambda _: None)
    assert record["weights_sha256"] == again["weights_sha256"] == weights_digest(tmp_path / "a")
    assert record["base_weights_sha256"] == weights_digest(BASE) != record["weights_sha256"]
    assert record["base"] == "fixtures/models/mathcomp-tiny", "a path inside the project, as committed"
    saved = json.loads((tmp_path / "a" / finetune.RECORD).read_text())
    assert saved["settings"]["cue_share"] == 0.95 and saved["settings"]["steps"] == 3
    tuned = AutoModelForCausalLM.from_pretrained(tmp_path / "a")
    base = AutoModelForCausalLM.from_pretrained(BASE)
    same = ("hidden_size", "num_hidden_layers", "num_attention_heads", "head_dim", "vocab_size")
    assert {k: getattr(tuned.config, k) for k in same} == {k: getattr(base.config, k) for k in same}
    changed = [
        name
        for (name, p), (_, q) in zip(tuned.named_parameters(), base.named_parameters(), strict=True)
        if not torch.equal(p, q)
    ]
    assert changed, "the weights moved"
    assert (tmp_path / "a" / "tokenizer.json").read_bytes() == (BASE / "tokenizer.json").read_bytes()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--steps", "0"], "--steps 0: expected at least 1"),
        (["--cue-share", "1.5"], "--cue-share 1.5: expected a share between 0 and 1"),
        (["--heldout", "0"], "--heldout 0: expected at least 1"),
        (["--out", str(BASE)], "the base model's own directory; choose another"),
        (
            ["--base", "nowhere"],
            "--base nowhere: no config.json there; expected a transformers model directory",
        ),
    ],
)
def test_bad_arguments_are_one_clear_error_before_any_training(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--out", str(tmp_path / "out"), *argv] if "--out" not in argv else argv
    with pytest.raises(SystemExit) as exit_:
        finetune.main(args)
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
