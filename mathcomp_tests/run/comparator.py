"""Where a run's baseline answers come from: a baseline file or run folder (--baseline), or a base model
asked the same prompts in the same run through the response cache (--baseline-model)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .. import formats
from ..backends import Backend, create, models
from ..baseline_file import reader
from ..baseline_file.fit import Baseline
from ..baseline_file.format import BaselineError, Fingerprint
from ..scoring import metrics, paired, soft_paired
from ..settings import Settings, conditions
from ..types import LABELS, NEUTRAL, PLAIN, Condition, Decoding, Prompt, cue_label
from ..verdict import standing
from ..verdict.result import CaseResult

Cached = Callable[[Backend], Backend]
"""Puts a backend behind the run's response cache."""
Neutral = Callable[[], tuple[CaseResult, list[Prompt]]]
"""A cue case's neutral partner in this run, and its prompts (asked through the cache on first call)."""
Answers = tuple[dict[str, str], dict[str, dict[str, float]] | None]
"""The base's outcomes (scenario -> less, more, equal, invalid, error) and label probabilities (None
where it kept none)."""


class Comparator:
    """Compares every case of a run with its baseline; built before any case runs, so a baseline that
    does not fit the run stops it at once (BaselineError)."""

    def __init__(self, settings: Settings, alpha: float, worker: str, cached: Cached):
        self.settings = settings
        self.alpha = alpha
        self.file: Baseline | None = None
        self.model: models.ModelSpec | None = None
        self.file_model: models.ModelSpec | None = None
        """The model ``file`` names, resolved once when it is read (None: a name that no longer resolves)."""
        self._worker = worker
        self._cached = cached
        self._backend: Backend | None = None

    @classmethod
    def create(
        cls, settings: Settings, fingerprint: Callable[[], Fingerprint], worker: str, cached: Cached
    ) -> Comparator | None:
        s = settings
        compares = s.update_baseline is None and (s.baseline is not None or s.baseline_model is not None)
        if s.fail_on == standing.NEW and not compares:
            raise BaselineError(
                "--fail-on=new needs a baseline (--baseline or --baseline-model, not --update-baseline): a "
                "failure is new when the base passed that case"
            )
        if s.update_baseline is not None:
            return None
        if s.baseline is not None and s.baseline_model is not None:
            raise BaselineError("give --baseline or --baseline-model, not both")
        if s.baseline is None and s.baseline_model is None:
            return None
        if s.paired_test not in paired.METHODS:
            raise BaselineError(
                f"--paired-test={s.paired_test}: expected one of {', '.join(paired.METHODS)}"
            )
        comparator = cls(s, paired.ALPHA, worker, cached)
        comparator.count_tests(conditions(s))
        if s.baseline is not None:
            comparator.file = reader.load(s.baseline)
            comparator.file.check_fits(fingerprint())
            comparator.file_model = models.recorded(comparator.file.model, comparator.file.folder)
        else:
            try:
                comparator.model = models.resolve(str(s.baseline_model), config=s.backend.model_config)
            except models.UnknownModelError as exc:
                raise BaselineError(f"--baseline-model: {exc}") from exc
        return comparator

    def count_tests(self, compared: Sequence[Condition | None]) -> None:
        """Under --holm, each test runs at alpha / m, m the tests of the cases compared: DirErr per label,
        soft DirErr per label under label scoring, and a cue case's toward-cue rate when the selection
        holds the neutral framing."""
        self.alpha = paired.ALPHA / max(self.tests(compared), 1) if self.settings.holm else paired.ALPHA

    def tests(self, compared: Sequence[Condition | None]) -> int:
        """How many tests against the baseline the cases of ``compared`` make (at most: a case the baseline
        lacks makes none)."""
        soft = len(LABELS) if self.settings.backend.scoring == "logprob" else 0
        cue = NEUTRAL in self.settings.framings
        return sum(
            len(LABELS) + soft + int(cue and c is not None and c.framing != NEUTRAL) for c in compared
        )

    @property
    def name(self) -> str:
        if self.file is not None:
            return self.file.model
        assert self.model is not None
        return self.model.resolved

    @property
    def base(self) -> models.ModelSpec | None:
        """The model the baseline answers come from (None: a baseline file naming a model that no longer
        resolves)."""
        return self.file_model if self.file is not None else self.model

    @property
    def base_from(self) -> str:
        """Where the base model comes from: ``baseline`` (a file or run folder) or ``baseline-model``."""
        return "baseline" if self.file is not None else "baseline-model"

    def compare(
        self,
        result: CaseResult,
        prompts: Sequence[Prompt],
        decoding: Decoding,
        case_id: str | None = None,
        neutral: Neutral | None = None,
    ) -> CaseResult:
        """``result`` with its comparison against the baseline's answers for ``case_id`` (default: its
        condition's id; test_generated's cases are ``generated:<id>``): DirErr per label; soft DirErr per
        label when both sides kept label probabilities; for a cue case with ``neutral``, the toward-cue
        rate."""
        case_id = case_id or result.condition.id
        found = self._answers(case_id, prompts, decoding)
        if found is None:
            return replace(result, baseline_status="no baseline")
        base, base_probs = found
        limits = result.ceilings.max_increase
        comparison = paired.compare(
            result.golds(),
            result.outcomes(),
            base,
            limits,
            baseline_model=self.name,
            method=self.settings.paired_test,
            alpha=self.alpha,
        )
        probs = result.probabilities()
        if probs and base_probs:
            soft = soft_paired.soft_changes(result.golds(), probs, base_probs, limits, self.alpha)
            comparison = replace(comparison, soft=soft)
        cue = cue_label(result.condition.framing)
        if cue is not None and neutral is not None:
            comparison = replace(comparison, cue=self._cue(result, case_id, cue, neutral, decoding, base))
        base_scores = standing.base_scores(result.golds(), base)  # new or known, when the case fails
        return replace(result, comparison=comparison, baseline_status="compared", base_scores=base_scores)

    def _cue(
        self,
        result: CaseResult,
        case_id: str,
        cue: str,
        neutral: Neutral,
        decoding: Decoding,
        base: dict[str, str],
    ) -> paired.LabelChange | None:
        """The toward-cue rate against the base's; None when the base has no answers for the neutral case."""
        partner, prompts = neutral()
        neutral_id = case_id.replace(result.condition.id, partner.condition.id)
        found = self._answers(neutral_id, prompts, decoding)
        if found is None:
            return None
        return paired.cue_change(
            result.golds(),
            (found[0], partner.outcomes()),
            (base, result.outcomes()),
            cue,
            result.ceilings.max_increase[cue],
            self.alpha,
        )

    def base_scores(self, case_id: str, prompts: Sequence[Prompt], decoding: Decoding) -> metrics.Scores | None:
        """The base's scores on ``prompts`` for ``case_id`` (None: the baseline has no answers for it)."""
        found = self.base_outcomes(case_id, prompts, decoding)
        golds = {p.scenario.id: p.scenario.label for p in prompts}
        return None if found is None else standing.base_scores(golds, found)

    def base_outcomes(self, case_id: str, prompts: Sequence[Prompt], decoding: Decoding) -> dict[str, str] | None:
        """The base's outcome of each of ``prompts``' scenarios for ``case_id`` (None: no answers for it)."""
        found = self._answers(case_id, prompts, decoding)
        return None if found is None else found[0]

    def _answers(self, case_id: str, prompts: Sequence[Prompt], decoding: Decoding) -> Answers | None:
        if self.file is not None:
            outcomes = self.file.outcomes(case_id)
            return None if outcomes is None else (outcomes, self.file.probabilities(case_id))
        if prompts and prompts[0].condition.protocol != PLAIN:
            return None  # --baseline-model asks plain prompts only: a protocol case has no baseline
        responses = self.backend.complete(prompts, decoding)
        out: dict[str, str] = {}
        probs: dict[str, dict[str, float]] = {}
        for prompt, response in zip(prompts, responses, strict=True):
            prediction = formats.read(prompt, response)
            out[prompt.scenario.id] = prediction.label or prediction.status
            got = response.meta.get("probs")
            if isinstance(got, dict):
                probs[prompt.scenario.id] = got
        return out, probs or None

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            assert self.model is not None
            # asked as the model is (--chat-template), or the comparison would measure the template
            options = replace(self.settings.backend, worker=self._worker, chat_template=self.settings.chat_template)
            self._backend = self._cached(create(self.model, options))
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
