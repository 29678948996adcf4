"""The suite's command-line options, and the run Settings they make.

Every help text ends with the option's default and, where one is read, its environment variable.
Numbers out of range are usage errors: nothing is silently replaced.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

import pytest

from ...backends.cache.file import CACHE_FILE
from ...formats import NAMES as FORMATS
from ...paths import default_thresholds
from ...prompts import IDENTITY_SIDES, known_identities
from ...protocols import PROTOCOLS
from ...rootdir import cache_dir as default_cache_dir
from ...settings import DEFAULT_MODEL, BackendOptions, SelectionError, Settings, select
from ...types import ALL_FRAMINGS, FRAMINGS, OPTION_ORDERS, PAPER_ORDER, PLAIN, POSITIONS
from . import baseline as baseline_options
from . import batch as batch_options
from . import ranges
from . import server as server_options
from . import shard as shard_options
from . import vllm as vllm_options

ENVIRONMENT = {
    "model": "MATHCOMP_MODEL",
    "dataset": "MATHCOMP_DATASET",
    "cache_dir": "MATHCOMP_CACHE_DIR",
    "baseline": "MATHCOMP_BASELINE",
    "judge_model": "MATHCOMP_JUDGE_MODEL",
    "identities_file": "MATHCOMP_IDENTITIES",
    "vllm_python": "MATHCOMP_VLLM_PYTHON",
}
"""Options whose default comes from an environment variable when it is set."""


def _env(dest: str) -> str | None:
    return os.environ.get(ENVIRONMENT[dest]) or None


def add(parser: pytest.Parser) -> None:
    """Register every option in one group."""
    group = parser.getgroup("mathcomp", "MathComp framing-bias suite")

    def option(name: str, help: str, shown: object = None, env: str | None = None, **kwargs: Any) -> None:
        """``shown`` is the default as --help states it; the value itself is None unless it is a plain
        value (a number, or a word the option takes)."""
        value = kwargs.pop("default", shown if isinstance(shown, (int, float)) else None)
        if env is not None:
            value = _env(env) or value
        notes = [f"default: {'none' if shown is None else shown}"]
        notes += [f"${ENVIRONMENT[env]} sets the default"] if env is not None else []
        suffix = f" ({'; '.join(notes)})" if notes else ""
        group.addoption(name, default=value, help=help + suffix, **kwargs)

    option(
        "--model",
        "alias (qwen2.5-3b, gpt-4o-mini, mathcomp-tiny, ...), symbolic, hf:<hub id or directory>, "
        "vllm:<hub id or directory> (served by a vLLM server the suite starts, or --api-base), or a litellm "
        "model string such as openai/<name>",
        DEFAULT_MODEL,
        env="model",
        default=DEFAULT_MODEL,
    )
    option(
        "--model-revision",
        "what the model is, as you know it (your fine-tune's commit); recorded with every answer and part "
        "of every cache key, so answers of one revision never stand for another's",
    )
    option(
        "--api-base",
        "base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (with vllm:..., a vLLM server "
        "already running with that model; the suite then starts none)",
    )
    option("--prompt-set", "hf, openai, claude or paper", "the set the authors ran for the model, else hf")
    option(
        "--framings",
        f"comma-separated, or all: {', '.join(ALL_FRAMINGS)} (the placebo framings run only when named, or "
        "with all)",
        "the paper's seven (neutral to indirect-equal)",
    )
    option("--positions", "comma-separated: begin, end", "both")
    option("--identities", "comma-separated identity ids from fixtures/identities.toml, or all", "std")
    option("--formats", f"comma-separated, or all: {', '.join(FORMATS)}", "one-word")
    option("--limit", "use N scenarios, drawn in proportion to category x gold label", "every scenario", type=int)
    shard_options.add(option)
    option(
        "--dataset",
        "a CSV in the MathComp schema, or mathcomp-original (the published benchmark, downloaded once into "
        "--cache-dir)",
        "fixtures/scenarios.csv",
        env="dataset",
    )
    option(
        "--dataset-policy",
        "rows that fail verification: strict stops the run, skip-invalid leaves them out, keep scores them "
        "with the published label",
        "keep for mathcomp-original, strict otherwise",
        choices=("strict", "skip-invalid", "keep"),
    )
    option("--thresholds", "ceilings file", "thresholds.toml at the rootdir, else the packaged defaults")
    option(
        "--device",
        "hf backend: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps",
        "auto",
        default="auto",
    )
    option(
        "--batch-size",
        "hf backend: prompts per batch; vllm and --api-batching=completions: prompts per request",
        "hf: automatic, halved on out-of-memory; 256 per request",
        type=int,
    )
    option(
        "--scoring",
        "hf, vllm and --api-batching=completions: greedy generation, or label log-probabilities (one-word "
        "and json formats)",
        "generate",
        default="generate",
        choices=("generate", "logprob"),
    )
    server_options.add(option)
    batch_options.add(option, group)
    vllm_options.add(option)
    option(
        "--max-new-tokens",
        "generation budget per answer",
        "one-word 8, json 24, cot and cot-json 512",
        type=int,
    )
    option(
        "--cache-dir",
        "where the sqlite response cache lives",
        ".mathcomp-cache at the rootdir",
        env="cache_dir",
    )
    group.addoption(
        "--no-cache", action="store_true", help="ask the model for every prompt, store nothing (default: off)"
    )
    option("--reports-dir", "where run folders go", "reports/ at the rootdir")
    # Comparing with a baseline: a paired test per case on the same items (thresholds.toml max_increase).
    baseline_options.add(option, group)

    # Installed use: the user's own files win over the packaged ones.
    option(
        "--identities-file",
        "identity markers (TOML, the schema of the packaged identities.toml) used instead of the packaged ones",
        "the packaged identities.toml",
        env="identities_file",
    )

    # The matrix beyond the paper's, the judge and decoding.
    option(
        "--option-orders",
        "orders of the lettered options by initials (lme = A) less B) more C) equal, the paper's), "
        f"comma-separated, or all for the six: {', '.join(OPTION_ORDERS)}",
        "lme",
    )
    option(
        "--identity-on",
        "who carries the identity marker in identity cases: b (the paper), a, both; comma-separated or all",
        "b",
    )
    option(
        "--judge-model",
        "a model (any --model spelling) that decides the cot and cot-json answers the reading rules decline, "
        "with the paper's judgement prompt",
        "none: they stay invalid",
        env="judge_model",
    )
    option(
        "--chat-template",
        "hf backend: auto applies the model's chat template; none sends the prompt as plain text, as the "
        "authors' Hugging Face notebook did",
        "auto",
        default="auto",
        choices=("auto", "none"),
    )
    option("--temperature", "sampling temperature; 0 is greedy", 0.0, type=float)
    option(
        "--samples",
        "answers per prompt, seeded 0..K-1 where the backend allows; the case asserts on the mean DirErr and "
        "reports its spread across samples (needs --temperature above 0)",
        1,
        type=int,
    )
    # Generated scenarios (test_generated, test_metamorphic); Hypothesis' own --hypothesis-seed seeds them.
    option(
        "--generated",
        "fresh scenarios per test_generated case, and examples per test_metamorphic case; "
        "--hypothesis-seed seeds them (default 0); 0 leaves test_generated out",
        100,
        type=int,
    )
    group.addoption(
        "--metamorphic",
        action="store_true",
        help="also run test_metamorphic: one scenario must get the same answer under neutral and cue framing, "
        "std and identity (failures shrink; the example database lives under --cache-dir) (default: off)",
    )
    # Mitigation protocols (mathcomp_tests/protocols): every selected case runs under each.
    option(
        "--protocol",
        "how each case is asked, comma-separated, or all: plain (the prompt as is), cot (its chain-of-thought "
        "format), evidence-lock (totals first, then the question), dual-direction (more? and less?, "
        "reconciled), canonicalize (the question rewritten neutrally first), symbolic (totals, compared by "
        "sympy); a protocol other than plain shows in the case id",
        "plain",
    )
    group.addoption(
        "--reveal-after",
        action="store_true",
        help="also run test_reveal_after: each item asked under a wrong-label cue, then under the true label's "
        "cue in the same conversation, both compared with the neutral answer (default: off)",
    )
    # Cue invariance (suite/test_invariance.py): paired metrics against the neutral framing.
    group.addoption(
        "--invariance",
        action="store_true",
        help="also run test_cue_invariance (each cue case against its neutral partner, held to the "
        "[invariance] ceilings) and test_neutral_balance (EDR, ND); summary.json and the report show the "
        "metrics either way (default: off)",
    )


def settings(config: pytest.Config) -> Settings:
    root = Path(config.rootpath)

    opt = config.getoption
    ranges.check(opt)
    if opt("generated") == 0 and opt("metamorphic"):
        raise SelectionError("--metamorphic needs --generated of at least 1: it is the examples each case tries")
    if opt("samples") > 1 and opt("temperature") == 0:
        raise SelectionError(
            "--samples above 1 needs --temperature above 0: greedy answers would all be the same"
        )
    cache_dir = default_cache_dir(opt("cache_dir"), root)
    identities_file = Path(opt("identities_file")) if opt("identities_file") else None
    thresholds = thresholds_path(opt("thresholds"), root)
    cache_path = None if config.getoption("no_cache") else cache_dir / CACHE_FILE
    batch = batch_options.settings(opt, cache_path)
    return Settings(
        model=opt("model"),
        prompt_set=opt("prompt_set"),
        framings=select(opt("framings"), ALL_FRAMINGS, "framing", FRAMINGS, "--framings"),
        positions=select(opt("positions"), POSITIONS, "position", POSITIONS, "--positions"),
        identities=select(
            opt("identities"), known_identities(identities_file), "identity", ("std",), "--identities"
        ),
        identities_file=identities_file,
        formats=select(opt("formats"), FORMATS, "format", ("one-word",), "--formats"),
        limit=opt("limit"),
        dataset=opt("dataset"),
        dataset_policy=opt("dataset_policy"),
        dataset_cache=cache_dir,
        thresholds=thresholds,
        backend=BackendOptions(
            api_base=opt("api_base"),
            model_config=Path(opt("model_config")) if opt("model_config") else None,
            max_concurrency=opt("max_concurrency"),
            num_retries=opt("num_retries"),
            request_timeout=opt("request_timeout"),
            device=opt("device"),
            batch_size=opt("batch_size"),
            scoring=opt("scoring"),
            model_revision=opt("model_revision"),
            api_batching=opt("api_batching"),
            max_connection_failures=opt("max_connection_failures"),
            server_timeout=opt("server_timeout"),
            max_error_streak=opt("max_error_streak"),
            response_cache=not config.getoption("no_cache"),
            vllm_python=opt("vllm_python"),
            vllm_tensor_parallel_size=opt("vllm_tensor_parallel_size"),
            vllm_data_parallel_size=opt("vllm_data_parallel_size"),
            vllm_dtype=opt("vllm_dtype"),
            vllm_max_model_len=opt("vllm_max_model_len"),
            vllm_gpu_memory_utilization=opt("vllm_gpu_memory_utilization"),
            vllm_args=opt("vllm_args") or "",
            vllm_start_timeout=opt("vllm_start_timeout"),
            batch=batch,
        ),
        max_error_rate=opt("max_error_rate"),
        max_new_tokens=opt("max_new_tokens"),
        option_orders=select(
            opt("option_orders"), OPTION_ORDERS, "option order", (PAPER_ORDER,), "--option-orders"
        ),
        identity_on=select(opt("identity_on"), IDENTITY_SIDES, "identity side", ("b",), "--identity-on"),
        judge_model=opt("judge_model"),
        chat_template=opt("chat_template"),
        temperature=opt("temperature"),
        samples=opt("samples"),
        cache_path=cache_path,
        reports_dir=Path(opt("reports_dir") or root / "reports"),
        generated=opt("generated"),
        hypothesis_seed=_seed(config.getoption("hypothesis_seed", None)),
        metamorphic=opt("metamorphic"),
        protocols=select(opt("protocol"), PROTOCOLS, "protocol", (PLAIN,), "--protocol"),
        reveal_after=opt("reveal_after"),
        invariance=opt("invariance"),
        shard=shard_options.settings(opt, os.environ),
        **baseline_options.settings(opt, thresholds, root),
    )


def _seed(given: object) -> int:
    """Hypothesis' --hypothesis-seed as an integer seed (a non-numeric seed is hashed stably); 0 if unset."""
    if given is None:
        return 0
    text = str(given)
    return int(text) if text.isdigit() else zlib.crc32(text.encode())


def thresholds_path(given: str | None, root: Path) -> Path:
    """--thresholds, else the rootdir's thresholds.toml, else the ceilings packaged with the suite."""
    if given:
        return Path(given)
    own = root / "thresholds.toml"
    return own if own.is_file() else default_thresholds()
