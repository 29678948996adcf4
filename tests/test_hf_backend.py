"""The hf backend on real tiny models: label-logprob scoring, out-of-memory back-off, device choice."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from helpers.suite_runner import REPO, run_suite
from helpers.usage import assert_usage_error

from mathcomp_tests.backends.base import BackendError
from mathcomp_tests.backends.local.hf import HFBackend, pick_device, pick_dtype
from mathcomp_tests.data.scenarios import load
from mathcomp_tests.formats import FORMATS
from mathcomp_tests.formats import read_response as parse
from mathcomp_tests.prompts import build, load_prompt_set, std_names
from mathcomp_tests.settings import BackendOptions
from mathcomp_tests.types import FRAMINGS, LABELS, Condition, Decoding, Prompt

SCENARIOS = load(REPO / "fixtures" / "scenarios.csv")
ONE_WORD = Decoding(max_new_tokens=8)


def _prompts(n: int, fmt: str = "one-word") -> list[Prompt]:
    """Prompts of mixed lengths: scenarios under framings and positions that vary together."""
    prompt_set = load_prompt_set("hf")
    return [
        build(
            s,
            Condition(FRAMINGS[i % 7], ("begin", "end")[i % 2], format=fmt),
            prompt_set,
            std_names(prompt_set),
        )
        for i, s in enumerate(SCENARIOS[:n])
    ]


def _backend(model: Path, **options: Any) -> HFBackend:
    return HFBackend(str(model), BackendOptions(device="cpu", **options))


def test_logprob_reads_the_trained_answer_with_its_probability(always_more_model: Path) -> None:
    backend = _backend(always_more_model, scoring="logprob", batch_size=4)
    responses = backend.complete(_prompts(10), ONE_WORD)
    assert [r.text for r in responses] == ["more"] * 10
    for r in responses:
        probs = r.meta["probs"]
        assert isinstance(probs, dict) and set(probs) == set(LABELS)
        assert probs["more"] > 0.9 and abs(sum(probs.values()) - 1) < 1e-9
        assert r.output_tokens == 0 and r.input_tokens
    # JSON: the label is scored where the value of "answer" starts, and written back as a JSON answer
    for r in backend.complete(_prompts(10, "json"), ONE_WORD):
        probs = r.meta["probs"]
        assert isinstance(probs, dict)
        assert parse(r, "json").label == max(LABELS, key=lambda y: probs[y])


def test_label_probabilities_are_generates_first_step(untrained_model: Path) -> None:
    """One left-padded forward pass per batch gives exactly the distribution greedy decoding starts from."""
    backend = _backend(untrained_model, scoring="logprob", batch_size=5)
    prompts = _prompts(12)
    scored = backend.complete(prompts, ONE_WORD)
    for prompt, response in zip(prompts, scored, strict=True):
        text = backend.render(prompt)
        enc = backend.tokenizer([text], return_tensors="pt", add_special_tokens=False)
        out = backend.model.generate(
            **enc, max_new_tokens=1, do_sample=False, output_logits=True, return_dict_in_generate=True
        )
        first = out.logits[0][0].float().softmax(-1)
        ids = backend.label_token_ids(text)
        mass = {y: float(first[ids[y]].sum()) for y in LABELS}
        expected = {y: m / sum(mass.values()) for y, m in mass.items()}
        assert response.meta["probs"] == pytest.approx(expected, abs=1e-5)
        assert response.text == max(LABELS, key=lambda y: expected[y])


def test_label_tokens_are_read_in_the_context_they_follow(always_more_model: Path) -> None:
    backend = _backend(always_more_model, scoring="logprob")
    prompt = _prompts(1)[0]
    after_template = backend.label_token_ids(backend.render(prompt))
    after_json = backend.label_token_ids(backend.render(prompt) + str(FORMATS["json"].logprob_prefix))
    for ids in (after_template, after_json):
        assert all(ids[y] for y in LABELS)
        assert not set(ids["less"]) & set(ids["more"]) and not set(ids["more"]) & set(ids["equal"])
    bare_more = backend.tokenizer("more", add_special_tokens=False)["input_ids"][0]
    assert bare_more in after_template["more"] and bare_more in after_json["more"]


class FakeOutOfMemoryBackend(HFBackend):
    """Stands in for a GPU that holds at most ``limit`` prompts per batch: larger batches raise CUDA's OOM."""

    limit = 3
    tried: list[int]

    def _generate(self, texts: list[str], decoding: Decoding) -> Any:
        self.tried.append(len(texts))
        if len(texts) > self.limit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return super()._generate(texts, decoding)


def test_out_of_memory_halves_the_batch_until_it_fits_and_keeps_the_order(untrained_model: Path) -> None:
    prompts = _prompts(14)
    fake = FakeOutOfMemoryBackend(str(untrained_model), BackendOptions(device="cpu"))
    fake.tried = []
    answers = fake.complete(prompts, Decoding(max_new_tokens=4))
    assert fake.tried[:3] == [14, 7, 3] and max(fake.tried[3:]) <= 3 and fake.batch_size == 3
    reference = _backend(untrained_model, batch_size=14).complete(prompts, Decoding(max_new_tokens=4))
    assert [r.text for r in answers] == [r.text for r in reference]

    fake.limit = 0
    with pytest.raises(BackendError, match="out of memory on cpu even for one prompt"):
        fake.complete(prompts[:2], Decoding(max_new_tokens=4))


def test_logprob_scores_reach_results_and_soft_dir_err_and_the_cache_tells_scorings_apart(
    tmp_path: Path, always_more_model: Path
) -> None:
    args = (f"--model=hf:{always_more_model}", "--limit=9", "--framings=neutral", "--positions=end")
    run = run_suite(tmp_path, *args, "--scoring=logprob", "--formats=one-word,json")
    assert run.returncode == 1, run.output  # it always says "more": DirErr(more) = 1
    for case in run.summary["cases"]:
        soft = case["scores"]["soft_dir_err"]
        assert soft["more"] > 0.9 and soft["less"] < 0.05 and soft["equal"] < 0.05
        assert case["scores"]["dir_err"]["more"] == 1.0
    assert all(set(r["probs"]) == set(LABELS) for r in run.records)
    generated = run_suite(tmp_path, *args, "--scoring=generate")
    assert generated.summary["prompts_sent"] == 9, "scoring is part of the cache key"
    assert all(r["probs"] is None for r in generated.records)


def test_cot_formats_are_generated_even_under_logprob_scoring(always_more_model: Path) -> None:
    backend = _backend(always_more_model, scoring="logprob", batch_size=8)
    responses = backend.complete(_prompts(3, "cot"), Decoding(max_new_tokens=4))
    assert all("probs" not in r.meta and r.output_tokens for r in responses)


class FakeTorch:
    """Stands in for machines this test cannot have: ``gpus`` CUDA devices, or none and no MPS."""

    def __init__(self, gpus: int):
        self.cuda = SimpleNamespace(is_available=lambda: gpus > 0, device_count=lambda: gpus)
        self.backends = SimpleNamespace(mps=SimpleNamespace(is_available=lambda: False))


def test_xdist_workers_are_pinned_round_robin_to_the_gpus() -> None:
    four = FakeTorch(gpus=4)
    assert [pick_device(four, "auto", f"gw{k}") for k in range(6)] == [
        "cuda:0", "cuda:1", "cuda:2", "cuda:3", "cuda:0", "cuda:1",
    ]  # fmt: skip
    assert pick_device(four, "auto", "main") == "cuda" and pick_device(four, "cuda:2", "gw0") == "cuda:2"
    with pytest.warns(UserWarning, match="one process .* with large batches is faster"):
        assert pick_device(FakeTorch(gpus=1), "auto", "gw1") == "cuda"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pick_device(FakeTorch(gpus=0), "auto", "gw3") == "cpu"
    assert pick_dtype(torch, "cpu") == torch.float32


def test_an_unknown_scoring_is_refused(untrained_model: Path) -> None:
    with pytest.raises(BackendError, match="unknown scoring 'beam'"):
        _backend(untrained_model, scoring="beam")


TINY = REPO / "fixtures" / "models" / "mathcomp-tiny"


def _damaged_copy(tmp_path: Path, value: float, names: int | None = None) -> Path:
    """The project's tiny model copied, ``value`` (NaN or inf) written over every weight of its first
    ``names`` tensors (None: all of them), as a training run that diverged leaves it."""
    from safetensors.torch import load_file, save_file

    copy = tmp_path / "diverged"
    shutil.copytree(TINY, copy)
    tensors = load_file(copy / "model.safetensors")
    for name in sorted(tensors)[:names]:
        tensors[name] = torch.full_like(tensors[name], value)
    save_file(tensors, copy / "model.safetensors", metadata={"format": "pt"})
    return copy


def test_weights_full_of_nan_are_refused_before_any_case_with_one_line(tmp_path: Path) -> None:
    model = _damaged_copy(tmp_path, float("nan"))
    run = run_suite(tmp_path, f"--model=hf:{model}", "--limit=2", "--framings=neutral", "--positions=end")
    assert_usage_error(run, f"{model / 'model.safetensors'}: ")
    (line,) = [line for line in run.output.splitlines() if "ERROR:" in line]
    assert "NaN or infinite" in line and "--scoring=logprob" not in run.output
    assert not (tmp_path / "reports" / "latest").exists(), "no case ran"


def test_one_tensor_holding_inf_is_named(tmp_path: Path) -> None:
    model = _damaged_copy(tmp_path, float("inf"), names=1)
    from safetensors.torch import load_file

    first = sorted(load_file(model / "model.safetensors"))[0]
    with pytest.raises(BackendError, match=rf"1 of its \d+ tensors holds NaN or infinite values: {first} "):
        _backend(model)


def test_a_torch_checkpoint_holding_nan_fails_on_load_naming_it(tmp_path: Path) -> None:
    """pytorch_model.bin is not scanned before the run (its floats are behind pickles): the weights are
    checked once loaded, and every case fails with that one error instead of answering empty strings."""
    from safetensors.torch import load_file

    model = _damaged_copy(tmp_path, float("nan"), names=2)
    tensors = load_file(model / "model.safetensors")
    torch.save(tensors, model / "pytorch_model.bin")
    (model / "model.safetensors").unlink()
    backend = _backend(model)
    for _ in range(2):  # the same error each time, without loading again
        with pytest.raises(BackendError, match=r"2 of its \d+ tensors hold NaN or infinite values") as caught:
            backend.complete(_prompts(2), ONE_WORD)
        assert str(model) in str(caught.value)
