"""The baseline options: each case compared with a baseline file, a run folder or a base model by a paired
test on the same items (thresholds.toml max_increase), or this run's answers written as the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...paths import default_thresholds


def add(option: Any, group: Any) -> None:
    """Declared through ``option`` (plugin/options/__init__.py), in the order docs/options.md lists them."""
    option(
        "--baseline",
        "a baseline file (written by --update-baseline) or a run folder; each case also fails when a DirErr "
        "rose significantly, by more than max_increase, over it",
        env="baseline",
    )
    option(
        "--baseline-model",
        "a model (same forms as --model) asked the same prompts in this run, as the baseline",
    )
    group.addoption(
        "--update-baseline",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="write this run's per-item answers as the baseline file instead of comparing (a run narrowed by -k, "
        "-m, --lf, --sw, --deselect or node ids rewrites only its own cases in it); PATH defaults to --baseline "
        "when that is a file, else baseline.txt beside your thresholds.toml, else in the rootdir (default: off)",
    )
    option(
        "--paired-test",
        "the paired test against the baseline: exact McNemar, or a bootstrap over scenarios",
        "mcnemar",
        default="mcnemar",
        choices=("mcnemar", "bootstrap"),
    )
    group.addoption(
        "--holm",
        action="store_true",
        help="Holm-correct the baseline tests across the run's cases and labels, family-wise alpha 0.05 "
        "(default: off)",
    )
    group.addoption(
        "--require-power",
        action="store_true",
        help="fail a run in which some compared case could not see a rise of detect_rise (thresholds.toml, "
        "default 0.15) with power 0.8: a pass it did not earn (default: said, not failed; require_power = "
        "true in thresholds.toml does the same per section)",
    )
    option(
        "--fail-on",
        "which failed cases fail the run: any, or new ones only (the base passed them; a case the base fails "
        "too is reported as xfailed, known); new needs --baseline or --baseline-model",
        "any",
        default="any",
        choices=("any", "new"),
    )


def settings(opt: Any, thresholds: Path, root: Path) -> dict[str, Any]:
    """--baseline, --baseline-model, --update-baseline (its default path), --paired-test, --holm, --require-power,
    --fail-on, as Settings fields.

    --update-baseline's file is --baseline's, else baseline.txt beside the user's thresholds file, else in the
    rootdir: never beside the ceilings packaged with the suite, inside the installed package."""
    baseline = Path(opt("baseline")) if opt("baseline") else None
    update = opt("update_baseline")
    if update is not None and not update:
        beside = thresholds.parent if thresholds.resolve() != default_thresholds().resolve() else root
        update = baseline if baseline is not None and not baseline.is_dir() else beside / "baseline.txt"
    return {
        "baseline": baseline,
        "baseline_model": opt("baseline_model"),
        "update_baseline": Path(update) if update is not None else None,
        "paired_test": opt("paired_test"),
        "holm": opt("holm"),
        "require_power": opt("require_power"),
        "fail_on": opt("fail_on"),
    }
