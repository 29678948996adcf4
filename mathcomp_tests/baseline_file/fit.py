"""A baseline's answers (Baseline) and whether they fit the run they are compared with: the same dataset,
prompt set and scenarios, some of the same cases, and test_generated's same draw. Read by
baseline_file/reader.py, written by baseline_file/writer.py. The model it names is kept as written: the
run resolves it (backends/models.py ``recorded``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..data.generated_draw import GENERATED_PREFIX, Draw
from ..listing import few, sides
from .format import RESTORE, BaselineError, Fingerprint


@dataclass(frozen=True)
class Baseline:
    source: Path
    model: str
    revision: str | None
    dataset: str
    dataset_sha256: str
    prompt_set: str
    scenarios: tuple[str, ...]
    cases: dict[str, dict[str, str]] = field(default_factory=dict)
    """case id -> scenario id -> outcome (less, more, equal, invalid, error); test_generated's cases
    under ``generated:<id>``."""
    generated: Draw | None = None
    """The generated scenarios its ``generated:`` cases answered; None when it has none."""
    probs: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """case id -> scenario id -> label probabilities, for the cases whose every answered item has them
    (format 4, --scoring=logprob); items without them (failed answers) are left out."""

    def outcomes(self, case_id: str) -> dict[str, str] | None:
        return self.cases.get(case_id)

    def probabilities(self, case_id: str) -> dict[str, dict[str, float]] | None:
        """scenario id -> label probabilities of the case's items; None when the baseline kept none."""
        return self.probs.get(case_id)

    @property
    def folder(self) -> Path:
        """The folder a relative model directory in ``model`` is written from: the run folder it was read
        from, or the file's."""
        return self.source if self.source.is_dir() else self.source.parent

    def check_generated_fits(self, run: Draw) -> None:
        """Raise BaselineError when this baseline's generated cases were asked on other scenarios than the
        run's test_generated draws (a baseline with no generated cases fits: they have no baseline)."""
        mine = self.generated
        if mine is None or mine == run:
            return
        if mine.options != run.options:
            detail = f"drawn with {mine.options} there, {run.options} here; run with its options"
        else:
            detail = f"the same options ({run.options}) now draw other scenarios (the generator changed)"
        raise BaselineError(
            f"baseline {self.source} does not fit this run's generated cases (test_generated): {detail}, "
            "or rewrite the baseline with --update-baseline"
        )

    def check_fits(self, run: Fingerprint) -> None:
        """Raise BaselineError naming every way this baseline differs from the run."""
        problems = []
        if self.dataset_sha256 != run.dataset_sha256:
            problems.append(
                f"another dataset: the baseline's {self.dataset} has sha256 {self.dataset_sha256[:16]}..., "
                f"the run's {run.dataset} has {run.dataset_sha256[:16]}..."
            )
        if self.prompt_set != run.prompt_set:
            problems.append(f"another prompt set: baseline {self.prompt_set!r}, run {run.prompt_set!r}")
        if self.scenarios != run.scenarios:
            detail = sides("the baseline", self.scenarios, "the run", run.scenarios)
            if set(self.scenarios) == set(run.scenarios):
                detail += "; same ids in another order"
            problems.append(f"other scenarios ({detail}; check --limit and --dataset)")
        if not self.cases:
            problems.append(f"the baseline has no cases (a damaged or cut-short file: {RESTORE})")
        elif run.cases and not set(run.cases) & {c.removeprefix(GENERATED_PREFIX) for c in self.cases}:
            problems.append(
                f"another selection: none of the run's {len(run.cases)} cases ({few(list(run.cases))}) is in "
                f"the baseline, which has {few(list(self.cases))}"
            )
        if problems:
            raise BaselineError(f"baseline {self.source} does not fit this run: " + "; ".join(problems))
