"""The gate, exact to the last digit: a model against its own baseline compares as a copy, and a damaged
format-4 baseline is refused, never read as a case that cannot rise."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file import update as baseline_update
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.baseline_file.format import BaselineError, probs_text
from mathcomp_tests.scoring import soft_paired

LIMITS = dict.fromkeys(("less", "more", "equal"), 0.05)
DEMO = ("--model=hf:fixtures/models/mathcomp-tiny", "--scoring=logprob", "--limit=60", "--generated=0")
CASES = ("--framings=neutral,direct-less", "--positions=end")


def _probabilities(n: int, seed: int) -> dict[str, dict[str, float]]:
    """Full-precision label probabilities, as a run records them (small spread: where rounding showed)."""
    rng = random.Random(seed)
    out = {}
    for i in range(n):
        less, more = 0.4 + rng.uniform(0, 0.002), 0.35 + rng.uniform(0, 0.002)
        out[str(i)] = {"less": less, "more": more, "equal": 1 - less - more}
    return out


def test_full_precision_against_the_files_thousandths_is_no_difference() -> None:
    golds = {str(i): ("more", "equal", "less")[i % 3] for i in range(60)}
    run = _probabilities(60, 1)
    order = list(run)
    kept = reader.parse(
        Path("b.txt"),
        "format: 4\nmodel: m\ndataset: d\ndataset-sha256: 0\nprompt-set: hf\n"
        f"scenarios: {' '.join(order)}\ncases: 1\ncase c: {'l' * 60} | {probs_text([run[s] for s in order])}\n",
    ).probs["c"]
    soft = soft_paired.soft_changes(golds, run, kept, LIMITS, 0.05)
    assert [(c.difference, c.p_value) for c in soft.values()] == [(0.0, 1.0)] * 3


def test_the_demo_model_against_its_own_baseline_compares_as_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "baseline.txt"
    first = run_suite(tmp_path / "first", *DEMO, *CASES, f"--update-baseline={path}")
    assert first.returncode == 0, first.output[-3000:]
    again = run_suite(tmp_path / "again", *DEMO, *CASES, f"--baseline={path}")
    assert again.returncode == 0, again.output[-3000:]
    soft = [(c["case"], y, t) for c in again.summary["cases"] for y, t in c["baseline"]["soft"].items()]
    assert len(soft) == 6, soft
    assert [(t["difference"], t["p_value"]) for _, _, t in soft] == [(0.0, 1.0)] * 6, soft


def _file(tmp_path: Path, case_lines: str, cases: int = 1) -> Path:
    path = tmp_path / "baseline.txt"
    path.write_text(
        "format: 4\nmodel: m\ndataset: d\ndataset-sha256: 0\nprompt-set: hf\nscenarios: 1 2 3\n"
        f"cases: {cases}\n{case_lines}"
    )
    return path


@pytest.mark.parametrize(
    ("items", "item"),
    [
        ("999,999,999 500,300,200 -", "item 1 (scenario 1): '999,999,999'"),
        ("500,300,200 0,0,0 -", "item 2 (scenario 2): '0,0,0'"),
        ("500,300,200 - 999,x,y", "item 3 (scenario 3): '999,x,y'"),
        ("500,300,200 1001,0,0 -", "item 2 (scenario 2): '1001,0,0'"),
        ("500,300,203 - -", "item 1 (scenario 1): '500,300,203'"),
    ],
)
def test_an_item_that_is_no_distribution_is_a_damaged_baseline(tmp_path: Path, items: str, item: str) -> None:
    path = _file(tmp_path, f"case neutral-end-std-one-word: lme | {items}\n")
    with pytest.raises(BaselineError) as caught:
        reader.load(path)
    said = str(caught.value)
    assert said.startswith(f"{path}:8: case neutral-end-std-one-word: {item}"), said
    assert "summing to 1000" in said and "restore it" in said


def test_thousandths_that_round_to_999_or_1001_are_a_distribution(tmp_path: Path) -> None:
    path = _file(tmp_path, "case neutral-end-std-one-word: lme | 333,333,333 334,334,333 500,300,200\n")
    assert reader.load(path).probs["neutral-end-std-one-word"]["1"]["less"] == 0.333


def test_a_case_line_that_lost_its_probabilities_is_a_damaged_baseline(tmp_path: Path) -> None:
    lines = (
        "case neutral-end-std-one-word: lme | 500,300,200 500,300,200 500,300,200\n"
        "case direct-less-end-std-one-word: lme\n"
        "case direct-less-end-std-cot: lme\n"
    )
    with pytest.raises(BaselineError, match=r"baseline.txt:9: case direct-less-end-std-one-word has no label "):
        reader.load(_file(tmp_path, lines, 3))
    kept = _file(tmp_path, lines.replace("direct-less-end-std-one-word: lme\n", "direct-less-end-std-one-word: "
                                          "lme | - - -\n"), 3)  # fmt: skip
    assert set(reader.load(kept).probs) == {"neutral-end-std-one-word", "direct-less-end-std-one-word"}


def test_a_damaged_baseline_stops_the_run_in_one_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "case neutral-end-std-one-word: lme | 999,999,999 - -\n")
    run = run_suite(tmp_path, "--model=symbolic", "--limit=3", f"--baseline={path}")
    assert run.returncode == pytest.ExitCode.USAGE_ERROR, run.output[-2000:]
    assert f"{path}:8: case neutral-end-std-one-word: item 1 (scenario 1)" in run.output
    assert "Traceback" not in run.output


def test_a_file_that_keeps_probabilities_says_which_case_has_none(tmp_path: Path) -> None:
    made = Baseline(
        source=tmp_path / "b.txt", model="m", revision=None, dataset="d", dataset_sha256="0", prompt_set="hf",
        scenarios=("1", "2"),
        cases={c: {"1": "less", "2": "more"} for c in ("neutral-end-std-one-word", "neutral-end-std-json",
                                                       "neutral-end-std-cot")},
        probs={"neutral-end-std-one-word": {s: {"less": 0.5, "more": 0.3, "equal": 0.2} for s in ("1", "2")}},
    )  # fmt: skip
    text = writer.write(made, tmp_path / "b.txt").read_text()
    assert "case neutral-end-std-json: lm | - -\n" in text, "scored by labels, none kept: said"
    assert "case neutral-end-std-cot: lm\n" in text, "a generated answer has no label probabilities"
    assert set(reader.load(tmp_path / "b.txt").probs) == {"neutral-end-std-one-word", "neutral-end-std-json"}


def _two_cases(tmp_path: Path) -> tuple[Path, Baseline]:
    made = Baseline(
        source=tmp_path / "b.txt", model="m", revision=None, dataset="d", dataset_sha256="0", prompt_set="hf",
        scenarios=("1", "2"),
        cases={"neutral-end-std-one-word": {"1": "less", "2": "more"},
               "direct-less-end-std-one-word": {"1": "less", "2": "less"}},
    )  # fmt: skip
    fresh = replace(made, cases={"neutral-end-std-one-word": {"1": "more", "2": "more"}})
    return writer.write(made, tmp_path / "b.txt"), fresh


def test_a_narrowed_update_keeps_a_crlf_files_line_ends(tmp_path: Path) -> None:
    path, fresh = _two_cases(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    done = baseline_update.update(path, fresh)
    assert (done.rewritten, done.kept) == (1, 1)
    data = path.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n"), "every line ends as the file's did"
    assert b"case neutral-end-std-one-word: mm\r\n" in data and b"case direct-less-end-std-one-word: ll\r\n" in data


def test_a_baseline_with_a_byte_order_mark_is_read_and_kept(tmp_path: Path) -> None:
    path, fresh = _two_cases(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert set(reader.load(path).cases) == {"neutral-end-std-one-word", "direct-less-end-std-one-word"}
    baseline_update.update(path, fresh)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf#"), "the mark is kept where it was"
    assert reader.load(path).cases["neutral-end-std-one-word"] == {"1": "more", "2": "more"}
