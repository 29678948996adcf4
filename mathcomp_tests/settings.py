"""What a run is configured with: the options as one frozen value, the selection and its conditions.

The bottom of the flow: built from pytest options by the plugin (or by hand in a test), read by every
step after it; it imports nothing of the project but the vocabulary in types.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from .types import FRAMINGS, PAPER_ORDER, PLAIN, POSITIONS, Condition

DEFAULT_MODEL = "hf:fixtures/models/mathcomp-tiny"
"""The embedded demonstration model (see fixtures/models/mathcomp-tiny/README.md)."""


@dataclass(frozen=True)
class BackendOptions:
    api_base: str | None = None
    """api: base URL of an OpenAI-compatible server."""
    model_config: Path | None = None
    """api: a litellm Router configuration (several deployments of one model)."""
    max_concurrency: int | None = None
    """api: requests in flight per process (None: 16 chat requests, 4 batched completions requests)."""
    num_retries: int = 4
    """api: retries per request on 429, 5xx and timeouts."""
    request_timeout: float = 120.0
    """api: seconds before one request counts as timed out."""
    device: str = "auto"
    """hf: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps."""
    batch_size: int | None = None
    """hf: prompts per forward pass (None finds one automatically); batched completions: prompts per
    request (None: 256)."""
    scoring: str = "generate"
    """hf, vllm, batched completions: `generate` (greedy decoding) or `logprob` (label probabilities,
    one-word and json formats)."""
    chat_template: str = "auto"
    """hf: `auto` applies the tokenizer's chat template when it has one; `none` sends the plain prompt text,
    as the authors' Hugging Face notebook did."""
    model_revision: str | None = None
    """What the user states the model is (their fine-tune's commit): recorded and part of every cache key."""
    worker: str = "main"
    """The xdist worker id (`gw0`, ...) or `main`; hf pins worker gwK to GPU K mod N."""
    api_batching: str = "chat"
    """api: `chat` sends one chat request per prompt through the litellm Router; `completions` renders
    prompts with the model's chat template and sends many per /v1/completions request (vllm always)."""
    max_connection_failures: int = 20
    """api, vllm: connection failures in a row after which the server counts as gone and the run ends."""
    server_timeout: float = 90.0
    """api, vllm: seconds without an answer to a completion request, with requests waiting, after which the
    run ends (a passed health check is no answer)."""
    max_error_streak: int = 32
    """api, vllm: error replies (408, 429, 5xx) in a row, no answer between, after which the run ends."""
    response_cache: bool = True
    """Whether answers are cached (False under --no-cache): what the dead-server error promises."""
    vllm_python: str | None = None
    """vllm: the Python that runs the server; None is $MATHCOMP_VLLM_PYTHON, else this interpreter."""
    vllm_tensor_parallel_size: int | None = None
    vllm_data_parallel_size: int | None = None
    vllm_dtype: str | None = None
    """vllm: --dtype for the server (vLLM's own default, `auto`, when None); part of the cache key."""
    vllm_max_model_len: int | None = None
    vllm_gpu_memory_utilization: float | None = None
    vllm_args: str = ""
    """vllm: further arguments for the server, as one shell-quoted string."""
    vllm_start_timeout: float = 600.0
    """vllm: seconds the server may take to report healthy."""
    vllm_servers: tuple[tuple[str, str], ...] = ()
    """vllm: (model name, base URL) of servers this run already started, shared by its xdist workers."""
    batch: BatchOptions | None = None
    """api: --batch (the provider's batch API instead of live requests); None: live requests."""


@dataclass(frozen=True)
class BatchOptions:
    """--batch and its options (backends/batch/)."""

    cache_path: Path
    """The response cache file: batch answers go into it, the batch records beside it."""
    wait: float | None = None
    """Seconds the run waits for its batches (None: until they end, the provider's 24 hours at most)."""
    poll: float = 30.0
    """Seconds between two status checks of the running batches."""
    fallback: str = "batch"
    """`batch`: failed requests go into a later batch; `live`: they are asked live when their case runs."""
    rounds: int = 2
    """Times a request a batch did not answer is sent again in a later batch, within one run."""


class SelectionError(ValueError):
    """A selection option names something that does not exist."""


T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    """--shard=I/N: this process runs shard ``index`` (1..count) of the selection, split by scenario
    (docs/sharding.md): the i-th scenario of the selection's stable order (0-based) goes to shard
    i mod count + 1, so every case asks a scenario under all its conditions in one shard."""

    index: int
    count: int
    source: str
    """Where I and N came from: ``--shard``, or the scheduler's environment variables."""

    def pick(self, items: Sequence[T], what: str) -> list[T]:
        """This shard's part of ``items`` (in their order); SelectionError when any shard of the run would get
        none (more shards than items), whichever shard this is."""
        mine = [x for n, x in enumerate(items) if n % self.count == self.index - 1]
        if self.count > len(items):
            raise SelectionError(
                f"{self.source}: {self.count} shards for the selection's {len(items)} {what}: "
                + (
                    f"shard {self.index} of {self.count} gets none of them"
                    if not mine
                    else f"shards {len(items) + 1} to {self.count} would get none of them"
                )
                + f"; use at most {len(items)} shards"
            )
        return mine

    def as_dict(self) -> dict[str, object]:
        return {"index": self.index, "count": self.count, "source": self.source}


@dataclass(frozen=True)
class Settings:
    """Everything a run is configured with; built from pytest options by the plugin."""

    model: str = DEFAULT_MODEL
    framings: tuple[str, ...] = FRAMINGS
    positions: tuple[str, ...] = POSITIONS
    identities: tuple[str, ...] = ("std",)
    formats: tuple[str, ...] = ("one-word",)
    option_orders: tuple[str, ...] = (PAPER_ORDER,)
    identity_on: tuple[str, ...] = ("b",)
    """Who carries the identity marker (prompts.IDENTITY_SIDES); standard cases run once whatever this is."""
    limit: int | None = None
    dataset: str | None = None
    """A CSV path, `mathcomp-original`, or None for the bundled fixtures/scenarios.csv."""
    dataset_policy: str | None = None
    dataset_cache: Path = Path(".mathcomp-cache")
    thresholds: Path = Path("thresholds.toml")
    prompt_set: str | None = None
    backend: BackendOptions = field(default_factory=BackendOptions)
    max_error_rate: float | None = None
    max_new_tokens: int | None = None
    cache_path: Path | None = None
    temperature: float = 0.0
    samples: int = 1
    """Answers asked per prompt (seeds 0..K-1); more than one needs a temperature above zero."""
    chat_template: str = "auto"
    """hf backend: `none` sends the plain prompt text, as the authors' Hugging Face notebook did."""
    judge_model: str | None = None
    """A model (any backend) that decides the chain-of-thought answers the reading rules decline."""
    reports_dir: Path = Path("reports")
    generated: int = 100
    """Fresh scenarios per test_generated case; also the examples test_metamorphic tries per case."""
    hypothesis_seed: int = 0
    """Seeds the generated scenarios, so a nightly run is reproducible and xdist workers agree."""
    metamorphic: bool = False
    """Run test_metamorphic (one scenario, neutral vs cue and std vs identity, must not flip)."""
    invariance: bool = False
    """Run test_cue_invariance and test_neutral_balance (the [invariance] ceilings)."""
    baseline: Path | None = None
    """A baseline file or run folder each case is compared with (paired, on the same items)."""
    baseline_model: str | None = None
    """A model asked the same prompts in the same run (through the cache) as the baseline."""
    update_baseline: Path | None = None
    """Write this run's per-item answers as the baseline file here, instead of comparing."""
    paired_test: str = "mcnemar"
    holm: bool = False
    """Holm-correct the baseline tests across the run's cases and labels."""
    require_power: bool = False
    """Fail a run whose compared cases could not see a rise of detect_rise (verdict/power.py)."""
    fail_on: str = "any"
    """Which failed cases fail the run: ``any``, or ``new`` ones only (known ones, failing on the base too,
    are reported as xfailed); ``new`` needs a baseline."""
    identities_file: Path | None = None
    """Identity markers to use instead of the bundled identities.toml."""
    protocols: tuple[str, ...] = (PLAIN,)
    """Mitigation protocols each case is asked under (mathcomp_tests/protocols); plain is today's prompt."""
    reveal_after: bool = False
    """Run test_reveal_after (Flip cue, then the Truth cue in the same conversation, against neutral)."""
    shard: Shard | None = None
    """--shard (or the scheduler's array index): this process runs one shard of the selection's scenarios."""



ANSWER_FIELDS = (
    "model", "prompt_set", "framings", "positions", "identities", "identity_on", "formats", "option_orders",
    "protocols", "limit", "dataset", "dataset_policy", "temperature", "samples", "max_new_tokens",
    "chat_template", "judge_model", "generated", "hypothesis_seed", "max_error_rate", "paired_test",
    "metamorphic", "invariance", "reveal_after",
)  # fmt: skip
"""The Settings that change a prompt, an answer or a score: every shard of one run shares them (shard.json's
options), and a merge rebuilds the whole run from them (merge/rebuild.py). The one list: both derive from it."""
GATE_FIELDS = ("baseline", "baseline_model", "holm", "require_power", "fail_on")
"""The Settings that change a verdict, not an answer: the shards record them, and the merged run takes them
unless it is given its own (merge/gate.py)."""
PLACE_FIELDS = (
    "backend", "thresholds", "identities_file", "dataset_cache", "cache_path", "reports_dir", "update_baseline",
    "shard",
)  # fmt: skip
"""The Settings that say where a run reads and writes and how it reaches its model: shard.json keeps the
digests of the files among them whose content decides (thresholds, identities) and the backend options that
change answers (scoring, model revision), not the paths."""


def select(
    given: str | None, known: tuple[str, ...], what: str, default: tuple[str, ...], option: str = ""
) -> tuple[str, ...]:
    """Parse a comma-separated selection (`all` for every value) against the known values; ``default``
    when the option was not given. An empty value (``--framings=``, ``a,,b``, a trailing comma) is an
    error: it never stands for the default, nor is it skipped."""
    if given is None:
        return default
    values = [v.strip() for v in given.split(",")]
    if "" in values:
        named = f"{option}={given}" if option else repr(given)
        raise SelectionError(
            f"{named}: an empty {what}; expected one or more of {', '.join(known)} (or 'all'), comma-separated"
        )
    if values == ["all"]:
        return known
    unknown = [v for v in values if v not in known]
    if unknown:
        raise SelectionError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)} (or 'all')")
    return tuple(dict.fromkeys(values))


def conditions(settings: Settings) -> list[Condition]:
    """The selected matrix, in a stable order: framing, position, identity, format, option order, protocol."""
    return [
        Condition(framing, position, identity, fmt, order, side, protocol)
        for framing in settings.framings
        for position in settings.positions
        for identity in settings.identities
        for side in (("b",) if identity == "std" else settings.identity_on)
        for fmt in settings.formats
        for order in settings.option_orders
        for protocol in settings.protocols
    ]
