"""A fine-tune gated against its base, as a team runs it: held to the base's ceilings when thresholds.toml has
no section for it, or to a section that extends the base's; the header and summary.json say which."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import warm_runs
from helpers.suite_runner import REPO, run_suite

DEMO = "hf:fixtures/models/mathcomp-tiny"
CUE_STEPS = 50
"""Half the command's default 100 steps: the cue case's soft DirErr(more) has risen well past the test's
0.2 by then, and training is most of the test's time."""
HELDOUT = 100
"""Held-out examples drawn for the scores the command prints (700 unless told): they never change the weights
(the same weights_sha256 either way), and this test gates the fine-tune on the suite's runs, not on them."""


@pytest.fixture
def finetune(tmp_path: Path) -> Path:
    """A copy of the demo model under a name of its own: another model directory, the same weights (held
    to the demo's ceilings, the top-level conftest.py's check exempts it as it exempts the demo)."""
    copy = tmp_path / "models" / "my-finetune"
    shutil.copytree(REPO / "fixtures" / "models" / "mathcomp-tiny", copy)
    return copy


@pytest.fixture(scope="module")
def cue_follower(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m training.finetune --cue-only more`: the demo model trained to answer *more* whenever the
    question says "more", every other framing held to the base's own label probabilities."""
    out = tmp_path_factory.mktemp("models") / "cue-follower"
    proc = subprocess.run(
        [warm_runs.python(), "-m", "training.finetune", "--out", str(out), "--cue-only=more", f"--steps={CUE_STEPS}",
         f"--heldout={HELDOUT}"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_a_copy_of_the_demo_model_passes_against_the_committed_baseline_with_the_bases_ceilings(
    tmp_path: Path, finetune: Path
) -> None:
    """`pytest --model=hf:<copy> --baseline=baseline.txt`, the default selection narrowed by -k to two
    conditions (their test_framing and test_generated cases): the base's answers, so no rise, under its ceilings."""
    run = run_suite(
        tmp_path, f"--model=hf:{finetune}", "--baseline=baseline.txt",
        "-k", "neutral-begin-std-one-word or (direct-more-begin-std-one-word and not indirect)", generated=True,
    )  # fmt: skip
    assert run.returncode == 0, run.output
    assert (
        f'no [model.*] section for this model: held to the base\'s [model."{DEMO}"] (from the baseline)'
        in run.output
    )
    summary = run.summary
    assert summary["threshold_sections"] == [f'model."{DEMO}"']
    assert summary["ceilings_from"] == {"via": "baseline", "model": DEMO, "sections": [DEMO]}
    assert (summary["cases_run"], summary["cases_failed"]) == (4, 0)
    case = run.case("neutral-begin-std-one-word")
    assert case["ceilings"]["sources"] == ["default", f'model."{DEMO}"']
    assert case["baseline"]["status"] == "compared"
    generated, _ = summary["generated_cases"]
    assert generated["ceilings"]["sources"] == ["default", f'model."{DEMO}"']
    assert generated["baseline"]["status"] == "compared", (
        "baseline.txt lacks the generated cases: regenerate it"
    )
    assert (
        f"baseline {DEMO}: 4 cases compared, 0 rises, largest change +0.0 points (no DirErr changed)"
        in run.output
    )


def test_baseline_model_lends_its_ceilings_too(tmp_path: Path, finetune: Path) -> None:
    run = run_suite(
        tmp_path, f"--model=hf:{finetune}", f"--baseline-model={DEMO}", "--limit=20", "--framings=neutral",
        "--positions=begin",
    )  # fmt: skip
    assert run.returncode == 0, run.output
    assert f'held to the base\'s [model."{DEMO}"] (from --baseline-model)' in run.output
    assert (  # at the end too, where a run read with -q shows no header
        f"MathComp: ceilings: hf:{finetune} has no [model.*] section in {REPO / 'thresholds.toml'}, so it was held "
        f'to [model."{DEMO}"], the sections of {DEMO} (the model of --baseline-model); add a section for it'
        in run.output
    ), run.output
    assert run.summary["ceilings_from"]["via"] == "baseline-model"
    assert run.case("neutral-begin-std-one-word")["baseline"]["status"] == "compared"


def test_a_section_that_extends_the_base_overrides_one_framing(tmp_path: Path, finetune: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text(
        (REPO / "thresholds.toml").read_text()
        + f'\n[model."hf:{finetune}"]\nextends = "{DEMO}"\n'
        + f'\n[model."hf:{finetune}".framing.neutral]\ndir_err = {{ equal = 0.30 }}\n'
    )
    run = run_suite(
        tmp_path, f"--model=hf:{finetune}", f"--thresholds={thresholds}", "--limit=20",
        "--framings=neutral,direct-less", "--positions=begin",
    )  # fmt: skip
    assert run.returncode == 1, run.output
    assert f'[model."hf:{finetune}"] extends [model."{DEMO}"]' in run.output
    neutral, cued = run.case("neutral-begin-std-one-word"), run.case("direct-less-begin-std-one-word")
    assert neutral["breaches"] == ["DirErr(equal)"] and neutral["ceilings"]["dir_err"]["equal"] == 0.30
    assert cued["passed"] and cued["ceilings"]["dir_err"]["less"] == 1.0  # the base's direct-less ceiling
    row = run.table_row("neutral-begin-std-one-word")
    assert row.count("*") == 1 and row.rstrip().endswith("FAIL")
    assert run.summary["ceilings_from"] == {
        "via": "own",
        "model": f"hf:{finetune}",
        "sections": [DEMO, f"hf:{finetune}"],
    }


@pytest.mark.slow
def test_a_cue_follower_that_leaves_neutral_alone_fails_on_its_cue_case_by_the_soft_test(
    tmp_path: Path, cue_follower: Path
) -> None:
    """The base already answers *more* to every direct-more item, so no answer there can change and the hard
    DirErr(more) cannot rise: only the label probabilities show the fine-tune following the cue harder.
    Gated on label probabilities against a baseline written under --scoring=logprob, the cue case fails as
    new on that soft rise while neutral, left alone, passes."""
    baseline = tmp_path / "base.txt"
    selection = ("--scoring=logprob", "--framings=neutral,direct-more", "--positions=end", "--limit=30")
    base = run_suite(tmp_path / "base", f"--model={DEMO}", *selection, f"--update-baseline={baseline}")
    assert base.returncode == 0, base.output
    run = run_suite(
        tmp_path / "tuned", f"--model=hf:{cue_follower}", f"--baseline={baseline}", "--fail-on=new", *selection
    )
    cued, neutral = run.case("direct-more-end-std-one-word"), run.case("neutral-end-std-one-word")
    was = base.case("direct-more-end-std-one-word")["scores"]
    assert was["dir_err"]["more"] == cued["scores"]["dir_err"]["more"] == 1.0, "saturated: no hard rise possible"
    assert cued["baseline"]["changes"]["more"]["rose"] == 0
    soft = (was["soft_dir_err"]["more"], cued["scores"]["soft_dir_err"]["more"])
    print(f"\nsoft DirErr(more) under direct-more after {CUE_STEPS} steps: {soft[0]:.3f} -> {soft[1]:.3f}")
    assert soft[1] > soft[0] + 0.2
    assert neutral["scores"]["dir_err"] == base.case("neutral-end-std-one-word")["scores"]["dir_err"]
    assert run.returncode == 1, run.output
    assert "soft DirErr(more) rise" in cued["breaches"] and cued["standing"] == "new"
    assert run.table_row("direct-more-end-std-one-word").endswith("FAIL (new)")
    assert "1 rise (direct-more-end-std-one-word: soft DirErr(more))" in run.output  # the line names it
    assert neutral["passed"], neutral["breaches"]
