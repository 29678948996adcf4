"""The run's verdict, one for every reader: pytest's exit status at the session's end (plugin/finish.py),
`mathcomp merge`, the terminal's closing line, the report's verdict box, the CI job summary and the site.
A pure function of summary.json: which cases failed, how many are new and how many known (the base fails
them too), whether that fails the run under --fail-on (``baseline.fail_on``), the other gated checks, the
tests pytest failed that the summary has no other word for, Holm, the power requirement, completeness
(summary_format.is_incomplete), narrowing and shard-ness. A summary without ``failures`` had no baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import summary_format
from . import narrowing, power
from .standing import KNOWN, NEW

Case = Mapping[str, Any]


def every_case(summary: Mapping[str, Any]) -> list[Case]:
    """test_framing's cases and test_generated's (``generated_cases``, where the summary has them)."""
    return [*summary.get("cases", []), *(summary.get("generated_cases") or [])]


def invariance_failures(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(case, what failed) of the gated cue-invariance checks."""
    inv = summary.get("invariance") or {}
    if not inv.get("gated"):
        return []
    return [
        (str(c["case"]), "; ".join(str(b) for b in c.get("breaches", [])))
        for c in (*inv.get("cues", []), *inv.get("neutral", []))
        if not c.get("passed", True)
    ]


def failed_cases(summary: Mapping[str, Any]) -> list[Case]:
    """Cases that failed, and cases only Holm's step-down at the end failed (marked new, and named in
    the baseline block's ``holm_failures``)."""
    holm = {str(t).partition(": ")[0] for t in (summary.get("baseline") or {}).get("holm_failures") or []}
    return [
        c
        for c in every_case(summary)
        if not c.get("passed", False) or c.get("standing") == NEW or str(c.get("case")) in holm
    ]


SUMMARIZED = ("test_framing", "test_generated", "test_cue_invariance", "test_neutral_balance", "test_reveal_after")
"""The suite's tests whose outcomes summary.json records case by case; a failure of any other test (such as
test_metamorphic) is known only from ``tests_failed``."""


def other_failures(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(check, what failed) of the run's other gated checks: cue invariance, Reveal-After, and the tests pytest
    failed whose outcome the summary records nowhere else."""
    reveal = [
        (str(r["case"]), ", ".join(map(str, r["breaches"])))
        for r in summary.get("reveal_after") or []
        if r.get("breaches")
    ]
    unrecorded = [
        (str(t), "failed (pytest's outcome)")
        for t in summary.get("tests_failed") or []
        if str(t).partition("[")[0] not in SUMMARIZED
    ]
    return [*invariance_failures(summary), *reveal, *unrecorded]


def standing_text(summary: Mapping[str, Any]) -> str:
    """`` (2 new, 5 known)`` when the run had a baseline and failures, else empty."""
    counts = summary.get("failures") or {}
    new, known = int(counts.get(NEW, 0)), int(counts.get(KNOWN, 0))
    return f" ({new} new, {known} known)" if new or known else ""


@dataclass(frozen=True)
class Verdict:
    line: str
    passed: bool
    new: int
    known: int
    known_pass: bool
    """Under --fail-on=new, known failures were all there was: the job passes with them shown."""
    exit_status: int = 1
    """pytest's exit status for the run: 0 it passed (a shard: it ran everything it meant to), else 1."""


def verdict(summary: Mapping[str, Any]) -> Verdict:
    """``FAILED: 3 of 28 cases (1 new, 2 known)``, ``PASSED: all 28 cases``, ``PASSED: no new failure
    ...`` (--fail-on=new), with ``INCOMPLETE (<reasons>):`` first when the run did not finish; a run pytest
    narrowed says so: ``PASSED: 4 of 28 cases selected (narrowed by -k 'neutral')``."""
    cases = every_case(summary)
    failed = failed_cases(summary)
    others = other_failures(summary)
    known = sum(c.get("standing") == KNOWN for c in failed)
    new = sum(c.get("standing") == NEW for c in failed)
    only_new = (summary.get("baseline") or {}).get("fail_on") == NEW
    failing = [c for c in failed if not (only_new and c.get("standing") == KNOWN)]
    narrowed = narrowing.phrase(summary.get("narrowed"))
    blind = power.phrase(summary.get("power"))
    unearned = bool((summary.get("power") or {}).get("not_earned"))
    if not (failing or others) and summary.get("tests_failed"):  # pytest failed what no record above explains
        others = [(str(t), "failed (pytest's outcome)") for t in summary["tests_failed"]]
    if failing or others:
        line = f"FAILED: {len(failed)} of {len(cases)} cases{standing_text(summary)}"
        line += f" and {len(others)} other checks" if others else ""
        line += f"; {narrowed}" if narrowed else ""
    elif failed:
        line = f"PASSED: no new failure; {known} of {len(cases)} cases fail as the base does (known)"
        line += f"; {narrowed}" if narrowed else ""
    else:
        line = f"PASSED: {narrowed}" if narrowed else f"PASSED: all {len(cases)} cases"
    if blind:
        line += f"; {blind}"
    if unearned and line.startswith("PASSED: "):
        line = "NOT EARNED (power required): " + line.removeprefix("PASSED: ")
    incomplete = summary_format.is_incomplete(summary)
    if incomplete:
        reasons = "; ".join(summary_format.incomplete_reasons(summary))
        said = line.replace("PASSED: ", "", 1) if cases else "no case reported"
        line = f"INCOMPLETE{f' ({reasons})' if reasons else ''}: {said}"
    passed = not (failing or others or incomplete or unearned)
    shard = summary.get("shard")
    if shard:  # part of a run: never PASSED on its own, and exits 0 when complete (docs/sharding.md)
        gate = f"shard {shard['index']} of {shard['count']}: merge the shards to gate"
        said = f"{gate}; {line.replace('PASSED: ', '', 1)}"
        return Verdict(said, False, new, known, False, 1 if incomplete else 0)
    return Verdict(line, passed, new, known, passed and bool(failed), 0 if passed else 1)
