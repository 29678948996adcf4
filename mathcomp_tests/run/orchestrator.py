"""One run: the settings, the dataset, the model and the results writers, shared by every case.

The orchestrator: it calls each step of the flow (prompts, backends, protocols, reading, scoring, the
verdict, the records) and nothing below imports it. What is written about the run (summary.json, shard.json)
is written from its facts (run/facts.py), not from the Run: only run/ and the plugin hold one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import formats, prompts
from ..backends import Backend, create, models
from ..backends.base import OnResponse
from ..baseline_file.format import Fingerprint, sha256_of
from ..config import thresholds
from ..data.generated_draw import GENERATED_DIR, GENERATED_PREFIX, Draw, draw
from ..protocols import Kit, judge, load_texts
from ..records.items import item_record
from ..records.results import ResultsWriter
from ..scoring import metrics
from ..scoring.cue_pairs import condition_of
from ..settings import BackendOptions, SelectionError, Settings, conditions
from ..types import NEUTRAL, PLAIN, Condition, Decoding, Prompt, Scenario
from ..verdict import checks
from ..verdict.result import CaseResult
from .answering import Answering
from .batching import Batching
from .case import run_case
from .comparator import Comparator, Neutral
from .folders import PARTNERS, REVEAL_AFTER

# The cache (filelock) and the datasets (urllib) load with the first Run, not on import.
if TYPE_CHECKING:
    from ..backends.ahead import AskedAhead
    from ..backends.cache.store import CachedBackend


class Run:
    """Loads everything up front (errors surface before any case runs); the model loads on first use."""

    def __init__(
        self, settings: Settings, run_id: str, worker: str = "main", answering: Answering | None = None
    ):
        self.settings = settings
        self.run_id = run_id
        self.worker = worker
        self.answering = answering
        config = settings.backend.model_config
        self.spec = models.resolve(settings.model, config=config)
        self.prompt_set = prompts.load_prompt_set(settings.prompt_set or self.spec.prompt_set)
        self.identities = {
            on: prompts.load_identities(settings.identities_file, on=on) for on in prompts.IDENTITY_SIDES
        }
        from ..data import datasets, stratified

        self.dataset = datasets.resolve(settings.dataset, settings.dataset_policy, settings.dataset_cache)
        self.selection: list[Scenario] = stratified.draw(self.dataset.scenarios, settings.limit)
        shard = settings.shard  # --shard: this process asks its part of the selection (docs/sharding.md)
        self.scenarios = shard.pick(self.selection, "scenarios") if shard else self.selection
        self.thresholds = thresholds.load(settings.thresholds, models.named)
        self.judge_spec = models.resolve(settings.judge_model, config=config) if settings.judge_model else None
        if self.judge_spec is not None and self.judge_spec.kind == "symbolic":
            raise SelectionError(
                "--judge-model=symbolic cannot judge: it answers from the scenario's exact totals, not from the "
                "answer it is shown, so it would turn every unreadable answer into a correct one"
            )
        self.judge_template = judge.load_template() if settings.judge_model else None
        self.comparator = Comparator.create(settings, self.fingerprint, worker, self._cached)
        if self.comparator is not None and self.comparator.base is not None:
            self.thresholds = self.thresholds.with_base(self.comparator.base, self.comparator.base_from)
        self.thresholds.check_complete(self.spec, settings.framings)
        models.check_api_base(
            settings.backend.api_base,
            {
                "--model": self.spec,
                "--judge-model": self.judge_spec,
                "--baseline-model": self.comparator.model if self.comparator is not None else None,
            },
        )
        self._kit: Kit | None = None
        self._neutral: dict[tuple[Condition, tuple[str, ...]], CaseResult] = {}
        self.protocol_texts = load_texts() if settings.protocols != (PLAIN,) else {}
        self._backend: CachedBackend | AskedAhead | None = None
        self.batching = Batching()
        """--batch: the model's batch backend, and what was done by batch (summary.json's `batch`)."""
        self._asked: dict[tuple[Condition, bool], list[Prompt]] = {}
        """Prompts of cases asked ahead, by (condition, generated): built once, taken when the case runs."""
        self._judge: judge.Judge | None = None
        self._writers: dict[str, ResultsWriter] = {}
        """results.jsonl's writer of each subfolder of the run folder written so far ("" the top)."""
        self._generated: list[Scenario] | None = None
        self._generated_all: list[Scenario] = []  # test_generated's whole draw; a shard asks its part
        self._generated_fits = False

    @functools.cached_property
    def dataset_sha256(self) -> str:
        """The dataset file's sha256, read once."""
        return sha256_of(self.dataset.path)

    @property
    def run_dir(self) -> Path:
        return self.answering.folder if self.answering is not None else self.settings.reports_dir / self.run_id

    @property
    def backend(self) -> CachedBackend | AskedAhead:
        """The model behind its cache, created (and so probed) once per process; a backend that takes
        calls from several threads at once (batched completions) can also be asked ahead (``ask_ahead``)."""
        if self._backend is None:
            options = replace(
                self.settings.backend, worker=self.worker, chat_template=self.settings.chat_template
            )
            cached = self._cached(self._model(options))
            if getattr(cached.inner, "concurrent", False):
                from ..backends.ahead import AskedAhead

                self._backend = AskedAhead(cached)
            else:
                self._backend = cached
        return self._backend

    def _model(self, options: BackendOptions) -> Backend:
        """The model's backend: under --batch the run's own batch backend (its lines go where prefetch says)."""
        if self.answering is not None:
            return self.answering.model(self.settings.samples)
        batches = self.batching.model(self.spec, options)
        return batches if batches is not None else create(self.spec, options)

    def prefetch(self, cases: Sequence[tuple[Condition, bool]], say: Callable[[str], None]) -> None:
        """--batch: every turn of ``cases`` (condition, on the generated scenarios) the cache cannot answer,
        answered by batch into the cache before the first case runs (run/prefetch.py); progress lines go to
        ``say``. Nothing without --batch. BackendError (a BatchError: the wait ran out, results unreadable,
        a record unreadable) when the run must stop; the batches stay recorded."""
        self.batching.say = say
        _ = self.backend  # the model made: under --batch, with its batch backend
        if self.batching.backend is None:
            return
        chosen = dict.fromkeys(cases)
        asked = [(c, self.prompts_for(c, self.generated if g else None), self.decodings(c)) for c, g in chosen]
        self.batching.prefetch(asked, self.kit)

    def ask_ahead(self, condition: Condition, generated: bool = False) -> None:
        """Start asking ``condition``'s case now where the backend allows it (see backends/ahead.py): the
        engine answers it while the case before is read and scored. Plain cases only (a protocol's
        later turns depend on its earlier answers)."""
        from ..backends.ahead import AskedAhead

        backend = self.backend
        if not isinstance(backend, AskedAhead) or condition.protocol != PLAIN:
            return
        asked = self._asked[(condition, generated)] = self._case_prompts(condition, generated)
        for decoding in self.decodings(condition):
            backend.start(asked, decoding)

    def _case_prompts(self, condition: Condition, generated: bool) -> list[Prompt]:
        """A case's prompts: those built when it was asked ahead, else built now."""
        asked = self._asked.pop((condition, generated), None)
        return asked if asked is not None else self.prompts_for(condition, self.generated if generated else None)

    def fingerprint(self) -> Fingerprint:
        """What a baseline must have been made on to be compared with this run."""
        return Fingerprint(
            dataset=self.dataset.name,
            dataset_sha256=self.dataset_sha256,
            prompt_set=self.prompt_set.name,
            scenarios=tuple(s.id for s in self.selection),
            cases=tuple(c.id for c in conditions(self.settings)),
        )

    def _cached(self, inner: Backend) -> CachedBackend:
        """``inner`` behind the run's response cache (or none, under --no-cache)."""
        from ..backends.cache.store import CachedBackend, ResponseCache

        path = self.settings.cache_path
        return CachedBackend(inner, ResponseCache(path) if path else None)

    @property
    def judge(self) -> judge.Judge | None:
        """The judge's backend, created like the model's and sharing its response cache."""
        if self.judge_spec is None:
            return None
        if self._judge is None:
            options = replace(self.settings.backend, worker=self.worker, chat_template=judge.CHAT_TEMPLATE)
            if self.answering is not None:
                inner = self.answering.judge(self.judge_spec.resolved, self._judge_prompts())
            else:
                inner = create(self.judge_spec, options)
            self._judge = judge.Judge(self._cached(inner), self.judge_template)
        return self._judge

    def _judge_prompts(self) -> Callable[[Mapping[str, Any]], Prompt | None]:
        """What the judge was asked about a record's answer, rebuilt (None: a scenario not of this run)."""
        template = self.judge_template
        scenarios = {s.id: s for s in [*self.scenarios, *(self.generated if self.settings.generated else [])]}

        def asked(record: Mapping[str, Any]) -> Prompt | None:
            if template is None or record.get("scenario") not in scenarios:
                return None
            (prompt,) = self.prompts_for(condition_of(record), [scenarios[record["scenario"]]])
            return judge.judge_prompt(prompt, str(record.get("raw") or ""), template)

        return asked

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
        if self._kit is None:
            self._kit = Kit(
                self.prompt_set,
                self.names_for,
                self.protocol_texts or load_texts(),
                self.settings.max_new_tokens,
                lambda fmt: formats.get(fmt).max_new_tokens,
            )
        return self._kit

    @property
    def generated(self) -> list[Scenario]:
        """``settings.generated`` fresh scenarios, the same in every process for the same seed."""
        if self._generated is None:
            from ..data.generated_sets import balanced

            n, seed, shard = self.settings.generated, self.settings.hypothesis_seed, self.settings.shard
            whole = self._generated_all = [replace(s, id=f"gen-{seed}-{s.id}") for s in balanced(n, seed)]
            self._generated = shard.pick(whole, "generated scenarios") if shard else whole
        return self._generated

    def generated_draw(self) -> Draw:
        """What test_generated asks: --generated scenarios from --hypothesis-seed (a baseline must match)."""
        _ = self.generated
        return draw(self._generated_all, self.settings.hypothesis_seed)

    def check_generated_baseline(self) -> None:
        """Raise BaselineError when the baseline's generated cases were asked on other scenarios."""
        if self.comparator is not None and self.comparator.file is not None and not self._generated_fits:
            self.comparator.file.check_generated_fits(self.generated_draw())
            self._generated_fits = True

    def run_generated_case(self, condition: Condition) -> CaseResult:
        """One case over the generated scenarios, batched through the cache like any other case, and
        compared with the baseline's ``generated:<id>`` case (a baseline drawn otherwise: BaselineError)."""
        self.check_generated_baseline()
        asked = self._case_prompts(condition, generated=True)
        result = self._ask(condition, asked)
        if self.comparator is not None:
            case_id = GENERATED_PREFIX + condition.id
            result = self.comparator.compare(
                result, asked, self.decoding(condition), case_id, self._neutral_for(condition, generated=True)
            )
        self._write(GENERATED_DIR, self._records(result))
        return result

    def run_reveal_after(self, condition: Condition) -> dict[str, Any]:
        """Reveal-After on every scenario under ``condition``'s position, identity and format: the shares
        of protocols/reveal_after.summarise, and the breaches of the neutral framing's invalid and error
        ceilings (an item counts as unread when any of its three answers was)."""
        from ..protocols import reveal_after

        case = "reveal-after-" + condition.id.removeprefix("neutral-")
        got = reveal_after.ask(self.prompts_for(condition), self.backend, self.decoding(condition), self.kit)
        self._write(REVEAL_AFTER, (reveal_after.record(a, case, self.run_id) for a in got))
        summary = reveal_after.summarise(got)
        ceilings = self.thresholds.for_case(self.spec, condition.framing)
        breaches = checks.reveal_after_breaches({**summary, "items": len(got)}, ceilings, self.settings.max_error_rate)
        return {"case": case, **summary, "breaches": breaches}

    def decoding(self, condition: Condition) -> Decoding:
        tokens = self.settings.max_new_tokens or formats.get(condition.format).max_new_tokens
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
        reads_cot = formats.get(condition.format).judged or condition.protocol == "cot"
        judged = self.judge if reads_cot else None
        result = run_case(asked, self.backend, self.decodings(condition), ceilings, self.kit, judged, on_response)
        if condition.framing == NEUTRAL:  # kept for the project's own checks (neutral_scores)
            self._neutral[(condition, tuple(p.scenario.id for p in asked))] = result
        return result

    def run_case(self, condition: Condition, on_response: OnResponse | None = None) -> CaseResult:
        prompts_ = self._case_prompts(condition, generated=False)
        result = self._ask(condition, prompts_, on_response)
        if self.comparator is not None:
            result = self.comparator.compare(
                result, prompts_, self.decoding(condition), neutral=self._neutral_for(condition)
            )
        self._write("", self._records(result))
        return result

    def _neutral_for(self, condition: Condition, generated: bool = False) -> Neutral | None:
        """For a cue case whose selection holds the neutral framing: its neutral partner's answers and
        prompts (the comparator's toward-cue test); None otherwise (no neutral case would be asked)."""
        if condition.framing == NEUTRAL or NEUTRAL not in self.settings.framings:
            return None

        def partner() -> tuple[CaseResult, list[Prompt]]:
            found = self.neutral_result(condition, generated)
            return found, [i.prompt for i in found.items]

        return partner

    def _records(self, result: CaseResult) -> Iterator[dict[str, Any]]:
        """results.jsonl lines of a case's items."""
        for item in result.items:
            yield item_record(item, self.run_id, result.model, result.revision, result.chat_template)

    def neutral_scores(self, condition: Condition, generated: bool = False) -> metrics.Scores:
        """The scores of ``condition``'s neutral partner (same everything, framing neutral) on the same
        scenarios: the neutral case's own when it ran in this process, else asked through the cache (its
        answers recorded in the run folder's partners/: a merge answers it from them)."""
        return self.neutral_result(condition, generated).scores

    def neutral_result(self, condition: Condition, generated: bool = False) -> CaseResult:
        """``condition``'s neutral partner, as neutral_scores finds it."""
        neutral = replace(condition, framing=NEUTRAL)
        chosen = self.generated if generated else self.scenarios
        key = (neutral, tuple(s.id for s in chosen))
        if key not in self._neutral:
            self._write(PARTNERS, self._records(self._ask(neutral, self.prompts_for(neutral, chosen))))
        return self._neutral[key]

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
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    def _write(self, folder: str, records: Iterable[dict[str, Any]]) -> None:
        """Append ``records`` to results.jsonl of the run folder's ``folder`` ("" the top)."""
        if folder not in self._writers:
            self._writers[folder] = ResultsWriter(self.run_dir / folder if folder else self.run_dir, self.worker)
        self._writers[folder].write(records)
