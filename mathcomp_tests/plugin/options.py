"""The suite's command-line options, and the run Settings they make."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ..backends.options import BackendOptions
from ..run import DEFAULT_MODEL, SelectionError, Settings, known_identities, select
from ..types import FORMATS, FRAMINGS, POSITIONS


def add(parser: pytest.Parser) -> None:
    """Register every option in one group."""
    group = parser.getgroup("mathcomp", "MathComp framing-bias suite")
    group.addoption(
        "--model",
        default=os.environ.get("MATHCOMP_MODEL", DEFAULT_MODEL),
        help="alias (qwen2.5-3b, gpt-4o-mini, ...), symbolic, hf:<hub id or dir>, or a litellm "
        "model string such as openai/<name> (default: %(default)s)",
    )
    group.addoption(
        "--api-base",
        default=None,
        help="base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1",
    )
    group.addoption(
        "--prompt-set", default=None, help="hf, openai, claude or paper (default: the model's own, else hf)"
    )
    group.addoption(
        "--framings", default=None, help=f"comma-separated, or all (default: all): {', '.join(FRAMINGS)}"
    )
    group.addoption("--positions", default=None, help="comma-separated: begin, end (default: both)")
    group.addoption("--identities", default=None, help="comma-separated identity ids, or all (default: std)")
    group.addoption(
        "--formats", default=None, help=f"comma-separated, or all (default: one-word): {', '.join(FORMATS)}"
    )
    group.addoption("--limit", type=int, default=None, help="use only the first N scenarios")
    group.addoption(
        "--dataset",
        default=os.environ.get("MATHCOMP_DATASET"),
        help="a CSV in the MathComp schema, or mathcomp-original (the published benchmark, downloaded once "
        "into --cache-dir); default: fixtures/scenarios.csv",
    )
    group.addoption(
        "--dataset-policy",
        default=None,
        choices=("strict", "skip-invalid", "keep"),
        help="rows that fail verification: strict stops the run, skip-invalid leaves them out, keep scores them "
        "with the published label (default: keep for mathcomp-original, strict otherwise)",
    )
    group.addoption(
        "--thresholds", default=None, help="ceilings file (default: thresholds.toml at the rootdir)"
    )
    group.addoption("--device", default="auto", help="hf backend: auto, cpu, cuda, cuda:N, mps")
    group.addoption(
        "--batch-size", type=int, default=None, help="hf backend: prompts per batch (default: automatic)"
    )
    group.addoption(
        "--scoring",
        default="generate",
        choices=("generate", "logprob"),
        help="hf backend: greedy generation, or label log-probabilities (one-word and json formats)",
    )
    group.addoption(
        "--num-retries", type=int, default=4, help="api backend: retries on 429, 5xx and timeouts"
    )
    group.addoption("--request-timeout", type=float, default=120.0, help="api backend: seconds per request")
    group.addoption(
        "--model-config", default=None, help="api backend: a litellm Router config (YAML or JSON)"
    )
    group.addoption(
        "--max-error-rate",
        type=float,
        default=None,
        help="fail a case when more than this share of its requests failed (overrides thresholds.toml)",
    )
    group.addoption(
        "--max-concurrency", type=int, default=16, help="api backend: requests in flight per process"
    )
    group.addoption(
        "--max-new-tokens", type=int, default=None, help="override the per-format generation budget"
    )
    group.addoption(
        "--cache-dir",
        default=os.environ.get("MATHCOMP_CACHE_DIR"),
        help="where the sqlite response cache lives (default: .mathcomp-cache at the rootdir)",
    )
    group.addoption("--no-cache", action="store_true", help="ask the model for every prompt, store nothing")
    group.addoption(
        "--reports-dir", default=None, help="where run folders go (default: reports/ at the rootdir)"
    )
    _add_baseline_options(group)


def _add_baseline_options(group: Any) -> None:
    """Comparing with a baseline: paired tests on the same items (see thresholds.toml max_increase)."""
    group.addoption(
        "--baseline",
        default=os.environ.get("MATHCOMP_BASELINE"),
        help="a baseline file (written by --update-baseline) or a run folder; each case also fails when "
        "DirErr rose significantly by more than max_increase over it (env MATHCOMP_BASELINE; default: none)",
    )
    group.addoption(
        "--baseline-model",
        default=None,
        help="a model (same forms as --model) asked the same prompts in this run, as the baseline",
    )
    group.addoption(
        "--update-baseline",
        nargs="?",
        const="",
        default=None,
        metavar="PATH",
        help="write this run's per-item answers as the baseline file instead of comparing (default path: "
        "--baseline when it is a file, else baseline.txt beside the thresholds file)",
    )
    group.addoption(
        "--paired-test",
        default="mcnemar",
        choices=("mcnemar", "bootstrap"),
        help="the paired test against the baseline: exact McNemar or a paired bootstrap (default: mcnemar)",
    )
    group.addoption(
        "--holm",
        action="store_true",
        help="Holm-correct the baseline tests across the run's cases and labels (family-wise alpha 0.05)",
    )


def _baseline_settings(opt: Any, thresholds: Path) -> dict[str, Any]:
    baseline = Path(opt("baseline")) if opt("baseline") else None
    update = opt("update_baseline")
    if update is not None and not update:
        update = (
            baseline if baseline is not None and not baseline.is_dir() else thresholds.parent / "baseline.txt"
        )
    return {
        "baseline": baseline,
        "baseline_model": opt("baseline_model"),
        "update_baseline": Path(update) if update is not None else None,
        "paired_test": opt("paired_test"),
        "holm": opt("holm"),
    }


def settings(config: pytest.Config) -> Settings:
    opt, root = config.getoption, Path(config.rootpath)
    dataset = opt("dataset")
    cache_dir = Path(opt("cache_dir") or root / ".mathcomp-cache")
    kwargs: dict[str, Any] = {
        "model": opt("model"),
        "prompt_set": opt("prompt_set"),
        "framings": select(opt("framings"), FRAMINGS, "framing", FRAMINGS),
        "positions": select(opt("positions"), POSITIONS, "position", POSITIONS),
        "identities": select(opt("identities"), known_identities(), "identity", ("std",)),
        "formats": select(opt("formats"), FORMATS, "format", ("one-word",)),
        "limit": opt("limit"),
        "dataset": dataset,
        "dataset_policy": opt("dataset_policy"),
        "dataset_cache": cache_dir,
        "thresholds": Path(opt("thresholds") or root / "thresholds.toml"),
        "backend": BackendOptions(
            api_base=opt("api_base"),
            model_config=Path(opt("model_config")) if opt("model_config") else None,
            max_concurrency=opt("max_concurrency"),
            num_retries=opt("num_retries"),
            request_timeout=opt("request_timeout"),
            device=opt("device"),
            batch_size=opt("batch_size"),
            scoring=opt("scoring"),
        ),
        "max_error_rate": opt("max_error_rate"),
        "max_new_tokens": opt("max_new_tokens"),
        "cache_path": None if opt("no_cache") else cache_dir / "responses.sqlite",
        "reports_dir": Path(opt("reports_dir") or root / "reports"),
    }
    kwargs.update(_baseline_settings(opt, kwargs["thresholds"]))
    if kwargs["limit"] is not None and kwargs["limit"] < 1:
        raise SelectionError(f"--limit must be at least 1, got {kwargs['limit']}")
    return Settings(**kwargs)
