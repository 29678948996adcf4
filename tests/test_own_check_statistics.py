"""A project's own check against a baseline gets the paired statistics every built-in test has: a fine-tune
that moved a few neutral answers (noise) leaves a check the base fails too known; one that moved the gap
over neutral significantly, by more than max_increase, makes it new. The base here is the demo model's own
baseline file with neutral answers edited (a model edit on the base's side: the candidate changed exactly
those answers, nothing else)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, pytest_process

from mathcomp_tests.scoring import own_paired
from mathcomp_tests.scoring.own_paired import Side

DEMO = REPO / "fixtures" / "models" / "mathcomp-tiny"
SELECTION = ("--limit=40", "--positions=end", "--framings=neutral,direct-more", "-k", "test_framing")
NEUTRAL = "neutral-end-std-one-word"
CUED = "direct-more-end-std-one-word"
CHECK = "DirErr(more) over neutral"


def _gap(case: object, neutral: object) -> float | None:
    cued, plain = case.dir_err["more"], neutral.dir_err["more"]  # type: ignore[attr-defined]
    return None if cued is None or plain is None else cued - plain


def _sides(moved: int) -> tuple[dict[str, str], Side, Side]:
    """300 scenarios; the candidate's neutral case answers ``moved`` non-more items right that the base
    answered more; the cued case is the same on both sides."""
    rng = random.Random(5)
    golds = {str(i): ("more", "equal", "less")[i % 3] for i in range(300)}
    cued = {s: ("more" if rng.random() < 0.7 else g) for s, g in golds.items()}
    base_neutral = {s: ("more" if rng.random() < 0.4 else g) for s, g in golds.items()}
    wrong = [s for s, g in golds.items() if g != "more" and base_neutral[s] == "more"]
    candidate_neutral = {**base_neutral, **{s: golds[s] for s in wrong[:moved]}}
    return golds, Side(cued, candidate_neutral), Side(cued, base_neutral)


def test_three_neutral_answers_are_no_rise_of_the_gap() -> None:
    golds, candidate, base = _sides(3)
    test = own_paired.rise(CHECK, _gap, golds, candidate, base, 0.005, 0.05)
    assert test is not None and test["difference"] > 0.005, "the gap moved past max_increase"
    assert test["p_value"] == pytest.approx(1 / 8) and not test["breach"], test
    assert "not a significant rise" in own_paired.text(test)


def test_forty_neutral_answers_are_a_rise_of_the_gap() -> None:
    golds, candidate, base = _sides(40)
    test = own_paired.rise(CHECK, _gap, golds, candidate, base, 0.05, 0.05)
    assert test is not None and test["breach"] and test["p_value"] < 0.01, test
    assert test["power"]["text"].startswith("sees a rise of +")
    assert "a significant rise above max_increase 0.050" in own_paired.text(test)


def _their_repo(tmp_path: Path) -> Path:
    """A user's repository: the starter conftest and ceilings no model breaches (the demo model is held to
    [default], so the conftest's check applies to it)."""
    repo = tmp_path / "their-repo"
    repo.mkdir(parents=True)
    (repo / "conftest.py").write_text((REPO / "conftest.py").read_text())
    (repo / "thresholds.toml").write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    return repo


def _suite(repo: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["-p", "no:cacheprovider", "--pyargs", "mathcomp_tests.suite", f"--cache-dir={repo / 'cache'}"]
    command += [f"--reports-dir={repo / name}", f"--model=hf:{DEMO}", *SELECTION, *args]
    return pytest_process(command, cwd=repo)


def _base_with_neutral_answers_moved(repo: Path, moved: int) -> Path:
    """The demo model's baseline, its neutral line edited: ``moved`` items the model answers right (gold
    not more) answered more, so that the candidate's gap over neutral is larger by that many answers."""
    path = repo / f"baseline-{moved}.txt"
    written = _suite(repo, f"base-{moved}", f"--update-baseline={path}")
    assert path.exists(), written.stdout[-3000:]
    records = [json.loads(line) for line in (repo / f"base-{moved}" / "latest" / "results.jsonl").open()]
    right = [r["scenario"] for r in records if r["case"] == NEUTRAL and r["gold"] != "more" and r["label"] == r["gold"]]
    assert len(right) >= moved, f"{len(right)} neutral items answered right"
    lines = path.read_text().splitlines()
    order = next(line for line in lines if line.startswith("scenarios: ")).split()[1:]
    at = next(i for i, line in enumerate(lines) if line.startswith(f"case {NEUTRAL}: "))
    head, letters = lines[at].rsplit(" ", 1)
    letters = "".join("m" if s in right[:moved] else ch for s, ch in zip(order, letters, strict=True))
    lines[at] = f"{head} {letters}"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("moved", "standing"), [(3, "known"), (10, "new")])
def test_an_own_check_the_base_fails_too_is_new_only_when_its_rise_is_significant(
    tmp_path: Path, moved: int, standing: str
) -> None:
    repo = _their_repo(tmp_path)
    path = _base_with_neutral_answers_moved(repo, moved)
    run = _suite(repo, "gated", f"--baseline={path}", "--fail-on=new", "-rx")
    output = run.stdout + run.stderr
    summary = json.loads((repo / "gated" / "latest" / "summary.json").read_text())
    case = next(c for c in summary["cases"] if c["case"] == CUED)
    test = case["own_tests"][CHECK]
    assert case["standing"] == standing, (test, output[-3000:])
    assert test["difference"] > test["max_increase"], "the gap moved past max_increase either way"
    assert test["breach"] == (standing == "new")
    assert run.returncode == (1 if standing == "new" else 0), output[-3000:]
    said = own_paired.text(test)
    assert said in output, output[-3000:]
    assert f"p = {test['p_value']:.3g}" in said and "on the base (which fails it too)" in said
