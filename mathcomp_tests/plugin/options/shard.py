"""--shard=I/N: one shard of the selection, from the option or from the scheduler that started the process.

The option wins. Without it, a Slurm array job (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, and
SLURM_ARRAY_TASK_MIN / SLURM_ARRAY_TASK_STEP when the array does not count 0, 1, 2, ...) or a Kubernetes
Indexed Job (JOB_COMPLETION_INDEX, the count in MATHCOMP_SHARDS) names the shard. A value that names no
shard is a usage error naming where it came from; nothing is guessed. One shard of one is the whole
selection, unmarked (``--shard=1/1`` turns the detection off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...settings import SelectionError, Shard

SLURM_ID = "SLURM_ARRAY_TASK_ID"
SLURM_COUNT = "SLURM_ARRAY_TASK_COUNT"
SLURM_MIN = "SLURM_ARRAY_TASK_MIN"
SLURM_STEP = "SLURM_ARRAY_TASK_STEP"
K8S_INDEX = "JOB_COMPLETION_INDEX"
SHARDS = "MATHCOMP_SHARDS"

_FORM = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$")
_NUMBER = re.compile(r"[0-9]+")
"""Digits 0-9 only: str.isdigit() and \\d also take other scripts' digits ('²', '٣'), which int()
refuses or reads as numbers no scheduler meant."""
EXPECTED = "expected I/N, whole numbers with 1 <= I <= N (shard I of N), e.g. --shard=1/3"


NOT_MERGED = {
    "metamorphic": (
        "--metamorphic",
        "Hypothesis draws its examples in one process, and no run folder keeps its outcome",
    ),
    "baseline_model": (
        "--baseline-model",
        "the base model's answers are not recorded for the merge to compare",
    ),
    "identities_file": (
        "--identities-file (or $MATHCOMP_IDENTITIES)",
        "its markers would have to be found again by the merge, which keeps only their digest",
    ),
}
"""Options a shard refuses: `mathcomp merge` could not gate what they add, and a merged PASS would not say so."""


def add(option: Any) -> None:
    """Declared through ``option`` (plugin/options/__init__.py), in the order docs/options.md lists them."""
    option(
        "--shard",
        "I/N: run shard I of N (1-based) of the selection, split by scenario: the i-th selected scenario "
        "(0-based, the selection's order) goes to shard i mod N + 1, under every case, so the shards "
        f"together ask the whole run; unset, ${SLURM_ID} (with ${SLURM_COUNT}, ${SLURM_MIN}) or "
        f"${K8S_INDEX} (with ${SHARDS}) set it; 1/1 is the whole selection (docs/sharding.md)",
        "the scheduler's array index, else the whole selection",
    )


def resolve(given: str | None, environ: Mapping[str, str]) -> Shard | None:
    """The shard this process runs, or None for the whole selection; SelectionError (one line naming the
    option or the variables) for a value that names no shard."""
    if given is not None:
        return _checked(*_parse(given, f"--shard={given}"), f"--shard={given}")
    if environ.get(SLURM_ID, "").strip():
        return _slurm(environ)
    if environ.get(K8S_INDEX, "").strip():
        return _indexed_job(environ)
    if environ.get(SHARDS, "").strip():
        raise SelectionError(
            f"{SHARDS}={environ[SHARDS]} is set but {K8S_INDEX} is not: the shard's index comes from a "
            f"Kubernetes Indexed Job (completionMode: Indexed); give --shard=I/N elsewhere"
        )
    return None


def _parse(text: str, where: str) -> tuple[int, int]:
    found = _FORM.match(text)
    if found is None:
        raise SelectionError(f"{where}: {EXPECTED}")
    return int(found.group(1)), int(found.group(2))


def _checked(index: int, count: int, where: str) -> Shard | None:
    if count < 1 or not 1 <= index <= count:
        raise SelectionError(f"{where}: shard {index} of {count} does not exist; {EXPECTED}")
    return None if count == 1 else Shard(index, count, where)


def _number(environ: Mapping[str, str], name: str, where: str, default: int | None = None) -> int:
    text = environ.get(name, "").strip()
    if not text and default is not None:
        return default
    if not _NUMBER.fullmatch(text):
        shown = f"{name}={text}" if text else f"{name} is not set"
        raise SelectionError(f"{where}: {shown}; expected a whole number (or give --shard=I/N)")
    return int(text)


def _slurm(environ: Mapping[str, str]) -> Shard | None:
    """Slurm's array: ids min, min+step, ... min+(count-1)*step; shard (id - min) / step + 1 of count."""
    shown = ", ".join(
        f"{n}={environ[n]}" for n in (SLURM_ID, SLURM_MIN, SLURM_STEP, SLURM_COUNT) if n in environ
    )
    where = f"the Slurm array ({shown})"
    task = _number(environ, SLURM_ID, where)
    count = _number(environ, SLURM_COUNT, where)
    first = _number(environ, SLURM_MIN, where, default=0)
    step = _number(environ, SLURM_STEP, where, default=1) or 1
    if task < first or (task - first) % step:
        raise SelectionError(
            f"{where}: task {task} is not one of the array's ids {first}, {first + step}, ..."
        )
    return _checked((task - first) // step + 1, count, where)


def _indexed_job(environ: Mapping[str, str]) -> Shard | None:
    """A Kubernetes Indexed Job: index 0..completions-1, the count in MATHCOMP_SHARDS."""
    shown = ", ".join(f"{n}={environ[n]}" for n in (K8S_INDEX, SHARDS) if n in environ)
    where = f"the Kubernetes Indexed Job ({shown})"
    index = _number(environ, K8S_INDEX, where)
    return _checked(index + 1, _number(environ, SHARDS, where), where)


def settings(opt: Any, environ: Mapping[str, str]) -> Shard | None:
    """The run's shard from the options and the environment, checked against the options it cannot go with:
    --update-baseline (a shard holds part of the answers), a --generated the shards cannot all share, and
    what `mathcomp merge` cannot gate from the shards' folders (NOT_MERGED)."""
    shard = resolve(opt("shard"), environ)
    if shard is None:
        return None
    if opt("update_baseline") is not None:
        raise SelectionError(
            f"--update-baseline is refused on a shard ({shard.source}: shard {shard.index} of {shard.count} "
            "holds part of the answers); write the baseline from a run of the whole selection (no --shard)"
        )
    for dest, (flag, why) in NOT_MERGED.items():
        if opt(dest):
            raise SelectionError(
                f"{flag} is refused on a shard ({shard.source}: shard {shard.index} of {shard.count}): {why}; "
                "run it in a run of the whole selection (no --shard)"
            )
    generated = opt("generated")
    if 0 < generated < shard.count:
        raise SelectionError(
            f"{shard.source}: --generated={generated} gives shard {shard.count} of {shard.count} no generated "
            f"scenario; use --generated of at least {shard.count}, or --generated=0"
        )
    return shard
