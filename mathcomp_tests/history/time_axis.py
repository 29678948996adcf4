"""Where each run of a history plot sits on its time axis: when it started, the time its run id starts with
(records.results.run_started; summary.json keeps no other time). A run whose run id tells no time
(``nightly-2025-01-01``) is counted older than every dated run, as the site's index counts it: such runs are
placed before the oldest dated run, one step apart (the median gap between the dated runs, else a day) in
run-id order, in a band the plot marks "time unknown"; when no run is dated, every run is one step apart."""

from __future__ import annotations

import datetime as dt
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import results

DAY = dt.timedelta(days=1)
NO_TIME = dt.datetime(2000, 1, 1)
"""Where the axis starts when no run is dated (never shown: such an axis has no dates)."""


def started(run_id: str) -> dt.datetime | None:
    """When the run started, or None when its run id does not say."""
    return results.run_started(run_id)


def age(run_id: str) -> tuple[bool, dt.datetime, str]:
    """A sort key, oldest first: runs whose id tells no time first (by id), then by time, then by id."""
    when = started(run_id)
    return when is not None, when or dt.datetime.min, run_id


@dataclass(frozen=True)
class Timeline:
    """Each run's place on the axis (``when``) and whether it is its start time (``dated``)."""

    when: list[dt.datetime]
    dated: list[bool]
    step: dt.timedelta
    """The gap between two undated runs (and the margin either side of the axis)."""

    @property
    def undated(self) -> int:
        return self.dated.count(False)

    def note(self) -> str:
        """How the runs whose id tells no time are placed, in a sentence; "" when every run is dated."""
        if not self.undated:
            return ""
        if self.undated == len(self.dated):
            return "No run id here tells when its run started: the runs are one step apart in run-id order."
        many = "runs whose run id tells" if self.undated > 1 else "run whose run id tells"
        return (
            f"{self.undated} {many} no time: placed before the oldest dated run, one step apart in "
            'run-id order, in the band marked "time unknown".'
        )


def timeline(run_ids: Sequence[str]) -> Timeline:
    """The axis of the runs ``run_ids``, each placed as the module says."""
    times = [started(r) for r in run_ids]
    known = sorted(t for t in times if t is not None)
    gaps = [b - a for a, b in zip(known, known[1:], strict=False) if b > a]
    step = dt.timedelta(seconds=statistics.median(g.total_seconds() for g in gaps)) if gaps else DAY
    undated = sorted((r for r, t in zip(run_ids, times, strict=True) if t is None))
    first = known[0] if known else NO_TIME + step * (len(undated) + 1)
    placed = {r: first - step * (len(undated) - i) for i, r in enumerate(undated)}
    when = [t if t is not None else placed[r] for r, t in zip(run_ids, times, strict=True)]
    return Timeline(when, [t is not None for t in times], step)
