"""Where a run's baseline answers come from: a baseline file or run folder (--baseline), or a base model
asked the same prompts in the same run through the response cache (--baseline-model)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..backends import BackendOptions, create, models
from ..backends.cache import CachedBackend, ResponseCache
from ..types import LABELS, PLAIN, Decoding, Prompt
from . import answers, baseline, paired
from .case import CaseResult

if TYPE_CHECKING:
    from ..run import Run


def fingerprint(run: Run) -> baseline.Fingerprint:
    from ..run import conditions

    return baseline.Fingerprint(
        dataset=run.dataset.name,
        dataset_sha256=baseline.sha256_of(run.dataset.path),
        prompt_set=run.prompt_set.name,
        scenarios=tuple(s.id for s in run.scenarios),
        cases=tuple(c.id for c in conditions(run.settings)),
    )


class Comparator:
    """Compares every case of a run with its baseline; built before any case runs, so a baseline that
    does not fit the run stops it at once (BaselineError)."""

    def __init__(self, run: Run, alpha: float):
        self.settings = run.settings
        self.alpha = alpha
        self.file: baseline.Baseline | None = None
        self.model: models.ModelSpec | None = None
        self._options: BackendOptions = run.settings.backend
        self._backend: CachedBackend | None = None
        self._worker = run.worker

    @classmethod
    def create(cls, run: Run) -> Comparator | None:
        s = run.settings
        if s.update_baseline is not None:
            return None
        if s.baseline is not None and s.baseline_model is not None:
            raise baseline.BaselineError("give --baseline or --baseline-model, not both")
        if s.baseline is None and s.baseline_model is None:
            return None
        if s.paired_test not in paired.METHODS:
            raise baseline.BaselineError(
                f"--paired-test={s.paired_test}: expected one of {', '.join(paired.METHODS)}"
            )
        from ..run import conditions

        tests = len(conditions(s)) * len(LABELS)
        alpha = paired.ALPHA / tests if s.holm else paired.ALPHA
        comparator = cls(run, alpha)
        if s.baseline is not None:
            comparator.file = baseline.load(s.baseline)
            comparator.file.check_fits(fingerprint(run))
        else:
            try:
                comparator.model = models.resolve(str(s.baseline_model))
            except models.UnknownModelError as exc:
                raise baseline.BaselineError(f"--baseline-model: {exc}") from exc
        return comparator

    @property
    def name(self) -> str:
        if self.file is not None:
            return self.file.model
        assert self.model is not None
        return self.model.resolved

    def compare(self, result: CaseResult, prompts: Sequence[Prompt], decoding: Decoding) -> CaseResult:
        base = self._answers(result.condition.id, prompts, decoding)
        if base is None:
            return replace(result, baseline_status="no baseline")
        comparison = paired.compare(
            result.golds(),
            result.outcomes(),
            base,
            result.ceilings.max_increase,
            baseline_model=self.name,
            method=self.settings.paired_test,
            alpha=self.alpha,
        )
        return replace(result, comparison=comparison, baseline_status="compared")

    def _answers(self, case_id: str, prompts: Sequence[Prompt], decoding: Decoding) -> dict[str, str] | None:
        if self.file is not None:
            return self.file.outcomes(case_id)
        if prompts and prompts[0].condition.protocol != PLAIN:
            return None  # --baseline-model asks plain prompts only: a protocol case has no baseline
        responses = self.backend.complete(prompts, decoding)
        out: dict[str, str] = {}
        for prompt, response in zip(prompts, responses, strict=True):
            prediction = answers.parse(response, prompt.condition.format)
            out[prompt.scenario.id] = prediction.label or prediction.status
        return out

    @property
    def backend(self) -> CachedBackend:
        if self._backend is None:
            assert self.model is not None
            inner = create(self.model, replace(self._options, worker=self._worker))
            path = self.settings.cache_path
            self._backend = CachedBackend(inner, ResponseCache(path) if path else None)
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
