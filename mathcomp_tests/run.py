"""One run: the options, the dataset, the model and the results writer, shared by every case."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import prompts
from .backends import Backend, BackendOptions, create, models
from .backends.base import OnResponse
from .protocols import Kit, load_texts
from .report.records import item_record
from .report.results import ResultsWriter
from .scoring import judge, thresholds
from .scoring.case import CaseResult, run_case
from .scoring.comparator import Comparator
from .types import FRAMINGS, PAPER_ORDER, PLAIN, POSITIONS, Condition, Decoding, Prompt, Scenario

# The cache (filelock) and the datasets (urllib) load with the first Run, not on import.
if TYPE_CHECKING:
    from .backends.cache import CachedBackend

DEFAULT_MODEL = "hf:fixtures/models/mathcomp-tiny"
"""The embedded demonstration model (see fixtures/models/mathcomp-tiny/README.md)."""
GENERATED = "generated"
REVEAL_AFTER = "reveal-after"
"""The run folder's subfolder for test_reveal_after's results.jsonl."""
"""The run folder's subfolder for test_generated's results.jsonl (the fixed set's stays at the top)."""
DEFAULT_MAX_NEW_TOKENS = {"one-word": 8, "json": 24, "cot": 512, "cot-json": 512}


class SelectionError(ValueError):
    """A selection option names something that does not exist."""


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
    identities_file: Path | None = None
    """Identity markers to use instead of the bundled identities.toml."""
    protocols: tuple[str, ...] = (PLAIN,)
    """Mitigation protocols each case is asked under (mathcomp_tests/protocols); plain is today's prompt."""
    reveal_after: bool = False
    """Run test_reveal_after (Flip cue, then the Truth cue in the same conversation, against neutral)."""


def select(given: str | None, known: tuple[str, ...], what: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """Parse a comma-separated selection (`all` for every value) against the known values."""
    if not given:
        return default
    values = [v.strip() for v in given.split(",") if v.strip()]
    if values == ["all"]:
        return known
    unknown = [v for v in values if v not in known]
    if unknown:
        raise SelectionError(f"unknown {what} {', '.join(unknown)}; known: {', '.join(known)} (or 'all')")
    return tuple(dict.fromkeys(values))


def known_identities(path: Path | None = None) -> tuple[str, ...]:
    return ("std", *prompts.load_identities(path))


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


class Run:
    """Loads everything up front (errors surface before any case runs); the model loads on first use."""

    def __init__(self, settings: Settings, run_id: str, worker: str = "main"):
        self.settings = settings
        self.run_id = run_id
        self.worker = worker
        self.spec = models.resolve(settings.model)
        self.prompt_set = prompts.load_prompt_set(settings.prompt_set or self.spec.prompt_set)
        self.identities = {
            on: prompts.load_identities(settings.identities_file, on=on) for on in prompts.IDENTITY_SIDES
        }
        from .data import datasets, scenarios

        self.dataset = datasets.resolve(settings.dataset, settings.dataset_policy, settings.dataset_cache)
        self.scenarios: list[Scenario] = scenarios.first(self.dataset.scenarios, settings.limit)
        self.thresholds = thresholds.load(settings.thresholds)
        self.thresholds.check_complete(self.spec, settings.framings)
        self.judge_spec = models.resolve(settings.judge_model) if settings.judge_model else None
        if self.judge_spec is not None and self.judge_spec.kind == "symbolic":
            raise SelectionError(
                "--judge-model=symbolic cannot judge: it answers from the scenario's exact totals, not from the "
                "answer it is shown, so it would turn every unreadable answer into a correct one"
            )
        self.judge_template = judge.load_template() if settings.judge_model else None
        self.comparator = Comparator.create(self)
        self.protocol_texts = load_texts() if settings.protocols != (PLAIN,) else {}
        self._backend: CachedBackend | None = None
        self._judge: judge.Judge | None = None
        self._writer: ResultsWriter | None = None
        self._generated: list[Scenario] | None = None
        self._generated_writer: ResultsWriter | None = None
        self._reveal_writer: ResultsWriter | None = None

    @property
    def run_dir(self) -> Path:
        return self.settings.reports_dir / self.run_id

    @property
    def backend(self) -> CachedBackend:
        """The model behind its cache, created (and so probed) once per process."""
        if self._backend is None:
            options = replace(
                self.settings.backend, worker=self.worker, chat_template=self.settings.chat_template
            )
            self._backend = self._cached(create(self.spec, options))
        return self._backend

    def _cached(self, inner: Backend) -> CachedBackend:
        """``inner`` behind the run's response cache (or none, under --no-cache)."""
        from .backends.cache import CachedBackend, ResponseCache

        path = self.settings.cache_path
        return CachedBackend(inner, ResponseCache(path) if path else None)

    @property
    def judge(self) -> judge.Judge | None:
        """The judge's backend, created like the model's and sharing its response cache."""
        if self.judge_spec is None:
            return None
        if self._judge is None:
            inner = create(self.judge_spec, replace(self.settings.backend, worker=self.worker))
            self._judge = judge.Judge(self._cached(inner), self.judge_template)
        return self._judge

    def names_for(self, condition: Condition) -> prompts.Names:
        if condition.identity == "std":
            return prompts.std_names(self.prompt_set)
        return self.identities[condition.identity_on][condition.identity]

    def prompts_for(self, condition: Condition, scenarios: list[Scenario] | None = None) -> list[Prompt]:
        names = self.names_for(condition)
        chosen = self.scenarios if scenarios is None else scenarios
        return [prompts.build(s, condition, self.prompt_set, names) for s in chosen]

    @property
    def kit(self) -> Kit:
        """What the protocols lay their turns out with (see mathcomp_tests/protocols)."""
        return Kit(
            self.prompt_set,
            self.names_for,
            self.protocol_texts or load_texts(),
            self.settings.max_new_tokens,
            lambda fmt: DEFAULT_MAX_NEW_TOKENS[fmt],
        )

    @property
    def generated(self) -> list[Scenario]:
        """``settings.generated`` fresh scenarios, the same in every process for the same seed."""
        if self._generated is None:
            from .data.generate import balanced

            n, seed = self.settings.generated, self.settings.hypothesis_seed
            self._generated = [replace(s, id=f"gen-{seed}-{s.id}") for s in balanced(n, seed)]
        return self._generated

    def run_generated_case(self, condition: Condition) -> CaseResult:
        """One case over the generated scenarios, batched through the cache like any other case."""
        result = self._ask(condition, self.prompts_for(condition, self.generated))
        if self._generated_writer is None:
            self._generated_writer = ResultsWriter(self.run_dir / GENERATED, self.worker)
        self._generated_writer.write(
            item_record(i, self.run_id, result.model, result.revision) for i in result.items
        )
        return result

    def reveal_after_conditions(self) -> list[Condition]:
        """One neutral plain condition per selected position x identity x format x option order."""
        return list(dict.fromkeys(replace(c, framing="neutral", protocol=PLAIN) for c in conditions(self.settings)))

    def run_reveal_after(self, condition: Condition) -> dict[str, Any]:
        """Reveal-After on every scenario under ``condition``'s position, identity and format: the shares
        of protocols/reveal_after.summarise, and the breaches of the neutral framing's invalid and error
        ceilings (an item counts as unread when any of its three answers was)."""
        from .protocols import reveal_after

        case = "reveal-after-" + condition.id.removeprefix("neutral-")
        got = reveal_after.ask(self.prompts_for(condition), self.backend, self.decoding(condition), self.kit)
        if self._reveal_writer is None:
            self._reveal_writer = ResultsWriter(self.run_dir / REVEAL_AFTER, self.worker)
        self._reveal_writer.write(reveal_after.record(a, case, self.run_id) for a in got)
        summary = reveal_after.summarise(got)
        ceilings = self.thresholds.for_case(self.spec, condition.framing)
        n = max(len(got), 1)
        breaches = [
            name
            for name, share, ceiling in (
                ("invalid_rate", (int(summary["unread"]) - int(summary["errors"])) / n, ceilings.invalid_rate),
                ("error_rate", int(summary["errors"]) / n, self.settings.max_error_rate or ceilings.error_rate),
            )
            if share > ceiling
        ]
        return {"case": case, **summary, "breaches": breaches}

    def decoding(self, condition: Condition) -> Decoding:
        tokens = self.settings.max_new_tokens or DEFAULT_MAX_NEW_TOKENS[condition.format]
        seed = 0 if self.settings.temperature > 0 else None
        return Decoding(max_new_tokens=tokens, temperature=self.settings.temperature, seed=seed)

    def decodings(self, condition: Condition) -> list[Decoding]:
        """One decoding per sample: seeds 0..K-1, so that K samples are K distinct cached answers."""
        first = self.decoding(condition)
        return (
            [replace(first, seed=k) for k in range(self.settings.samples)]
            if self.settings.samples > 1
            else [first]
        )

    def _ask(
        self, condition: Condition, asked: list[Prompt], on_response: OnResponse | None = None
    ) -> CaseResult:
        """Ask, read (with the judge where the format takes one) and score ``asked`` under its ceilings."""
        ceilings = self.thresholds.for_case(self.spec, condition.framing)
        if self.settings.max_error_rate is not None:
            ceilings = replace(ceilings, error_rate=self.settings.max_error_rate)
        reads_cot = condition.format in judge.JUDGED_FORMATS or condition.protocol == "cot"
        judged = self.judge if reads_cot else None
        kit = self.kit if condition.protocol != PLAIN else None
        return run_case(asked, self.backend, self.decodings(condition), ceilings, judged, on_response, kit)

    def run_case(self, condition: Condition, on_response: OnResponse | None = None) -> CaseResult:
        prompts_ = self.prompts_for(condition)
        result = self._ask(condition, prompts_, on_response)
        if self.comparator is not None:
            result = self.comparator.compare(result, prompts_, self.decoding(condition))
        if self._writer is None:
            self._writer = ResultsWriter(self.run_dir, self.worker)
        self._writer.write(item_record(i, self.run_id, result.model, result.revision) for i in result.items)
        return result

    def close(self) -> None:
        """Release the model and the results file; safe to call twice (fixture teardown, session end)."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self._judge is not None:
            self._judge.close()
            self._judge = None
        if self.comparator is not None:
            self.comparator.close()
        for writer in (self._writer, self._generated_writer, self._reveal_writer):
            if writer is not None:
                writer.close()
        self._writer = self._generated_writer = self._reveal_writer = None
