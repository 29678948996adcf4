"""A fine-tune gated against its base, as a team runs it: held to the base's ceilings when thresholds.toml has
no section for it, or to a section that extends the base's; the header and summary.json say which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.suite_runner import REPO, run_suite

DEMO = "hf:fixtures/models/mathcomp-tiny"


@pytest.fixture
def finetune(tmp_path: Path) -> Path:
    """A copy of the demo model under a name of its own: another model directory, the same weights (held
    to the demo's ceilings, the top-level conftest.py's check exempts it as it exempts the demo)."""
    copy = tmp_path / "models" / "my-finetune"
    shutil.copytree(REPO / "fixtures" / "models" / "mathcomp-tiny", copy)
    return copy


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
