"""Resolve a ``--dataset`` value to scenarios: a CSV path, or the published benchmark by name.

``mathcomp-original`` is the authors' CSV (Shafiei, Saffari and Moosavi, CC BY 4.0), downloaded once from
their GitHub repository at a pinned commit, checked against a pinned sha256 and kept in a cache directory;
after that it is used offline. A policy says what happens to rows that fail verification.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from ..paths import fixtures
from ..types import Scenario
from . import audit, checked, scenarios
from .audit import Finding
from .scenarios import DatasetError

Policy = Literal["strict", "skip-invalid", "keep"]
POLICIES: tuple[Policy, ...] = ("strict", "skip-invalid", "keep")

ORIGINAL = "mathcomp-original"
ORIGINAL_REPOSITORY = "Mamin78/more_or_less_wrong"
ORIGINAL_COMMIT = "7949815df34bf89966d8b5ab6b474d90f6597e96"
ORIGINAL_FILE = "MathComp_Dataset.csv"
ORIGINAL_SHA256 = "c836b2d9634d7438b928c95686e7b32c024169eddef97baf80b97709ee7cf068"
ORIGINAL_URL = f"https://raw.githubusercontent.com/{ORIGINAL_REPOSITORY}/{ORIGINAL_COMMIT}/{ORIGINAL_FILE}"
URL_VARIABLE = "MATHCOMP_ORIGINAL_URL"
MAX_BYTES = 16 * 2**20
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class LoadedDataset:
    """The scenarios a run scores, and every row a policy left out or kept despite its problem."""

    name: str
    path: Path
    policy: Policy
    scenarios: list[Scenario]
    excluded: list[Finding] = field(default_factory=list)
    kept_invalid: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)

    def header(self) -> list[str]:
        """Lines for the report header: the dataset, its policy, and each row the policy acted on."""
        where = self.name if self.name == str(self.path) else f"{self.name} ({self.path})"
        lines = [f"dataset: {where}, {len(self.scenarios)} scenarios, policy {self.policy}"]
        if self.kept_invalid:
            lines.append(
                f"  kept with the published label although it fails verification ({len(self.kept_invalid)}):"
            )
            lines += [f"    {f}" for f in self.kept_invalid]
        if self.excluded:
            lines.append(f"  left out ({len(self.excluded)}):")
            lines += [f"    {f}" for f in self.excluded]
        if self.notes:
            rows = len({f.id for f in self.notes})
            lines.append(
                f"  audit: {len(self.notes)} literal-reading finding(s) on {rows} row(s); "
                f"mathcomp audit {self.path} lists them"
            )
        return lines


def default_policy(value: str | None) -> Policy:
    """``keep`` for the published benchmark (its wrong labels are part of it), ``strict`` for everything else."""
    return "keep" if value == ORIGINAL else "strict"


def resolve(
    value: str | None,
    policy: str | None,
    cache_dir: Path,
    *,
    url: str | None = None,
    timeout: float = 60.0,
) -> LoadedDataset:
    """The dataset a ``--dataset`` value names (None: the bundled scenarios), under ``policy``.

    Raises DatasetError with a message for the user: an unknown policy, a file that cannot be used, a
    failed download, or (strict) the audit line of the first row that fails verification.
    """
    if policy is not None and policy not in POLICIES:
        raise DatasetError(f"unknown dataset policy {policy!r}; expected one of {', '.join(POLICIES)}")
    chosen = cast(Policy, policy) if policy else default_policy(value)
    if value == ORIGINAL:
        path, name = fetch_original(cache_dir, url=url, timeout=timeout), ORIGINAL
    elif value:
        path, name = Path(value).expanduser(), value
    else:
        path = fixtures() / "scenarios.csv"
        name = str(path)
    rows, found = checked.load(path, cache_dir)
    return apply_policy(name, path, rows, chosen, found)


def apply_policy(
    name: str,
    path: Path,
    rows: list[scenarios.Row],
    policy: Policy,
    row_findings: list[list[Finding]] | None = None,
) -> LoadedDataset:
    """Choose the rows to score: strict refuses any failing row, skip-invalid drops them, keep scores
    a row whose only problem is its label with the published label (and drops rows it cannot score).
    ``row_findings`` are the rows' audit findings when already known (else they are computed here)."""
    if row_findings is None:
        row_findings = [audit.check(r) for r in rows]
    findings = {id(r): f for r, f in zip(rows, row_findings, strict=True)}
    failing = [f for r in rows for f in findings[id(r)] if f.verification]
    notes = [f for r in rows for f in findings[id(r)] if not f.verification]
    if failing and policy == "strict":
        raise DatasetError(
            f"{path}: {len(failing)} row(s) fail verification; the first:\n  {failing[0]}\n"
            f"mathcomp audit {path} lists every finding; --dataset-policy=skip-invalid "
            "leaves such rows out, --dataset-policy=keep scores mislabelled rows with their published label"
        )
    kept: list[Scenario] = []
    excluded: list[Finding] = []
    kept_invalid: list[Finding] = []
    ids: set[str] = set()
    for row in rows:
        problem = next((f for f in findings[id(row)] if f.verification), None)
        keepable = row.kind is None or (policy == "keep" and row.kind == "label")
        if row.scenario is None or not keepable:
            excluded += [problem] if problem else []
        elif row.id in ids:
            excluded.append(Finding(row.id, row.line, "duplicate", f"ID {row.id} already kept", None, None))
        else:
            ids.add(row.id)
            kept.append(row.scenario)
            kept_invalid += [problem] if problem else []
    if not kept:
        raise DatasetError(f"{path}: no row passes verification, so {policy} leaves nothing to score")
    return LoadedDataset(name, path, policy, kept, excluded, kept_invalid, notes)


def fetch_original(
    cache_dir: Path, *, url: str | None = None, sha256: str = ORIGINAL_SHA256, timeout: float = 60.0
) -> Path:
    """The original CSV in ``cache_dir``, downloaded first if it is not there (or not intact).

    The download goes to a temporary file that is renamed into place only once its sha256 matches, so an
    interrupted or altered download leaves nothing behind. ``url`` defaults to $MATHCOMP_ORIGINAL_URL, then
    the pinned raw.githubusercontent.com address.
    """
    from filelock import FileLock

    folder = Path(cache_dir) / "datasets"
    target = folder / f"{ORIGINAL}-{sha256[:16]}.csv"
    if _intact(target, sha256):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder / f".{target.name}.lock"):
        if _intact(target, sha256):
            return target
        target.unlink(missing_ok=True)
        _download(url or os.environ.get(URL_VARIABLE) or ORIGINAL_URL, target, sha256, timeout)
    return target


def _intact(path: Path, sha256: str) -> bool:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    except OSError:
        return False


def _download(url: str, target: Path, sha256: str, timeout: float) -> None:
    hint = (
        f"nothing was cached. Retry, set {URL_VARIABLE} to a mirror, or download {ORIGINAL_URL} yourself "
        f"and pass --dataset=PATH (sha256 {sha256})"
    )
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    digest = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(handle, "wb") as out:
            request = urllib.request.Request(url, headers={"User-Agent": "mathcomp-tests"})
            with urllib.request.urlopen(request, timeout=timeout) as response:
                expected = response.headers.get("Content-Length")
                while chunk := response.read(_CHUNK):
                    size += len(chunk)
                    if size > MAX_BYTES:
                        raise DatasetError(f"{url} sent more than {MAX_BYTES} bytes; {hint}")
                    digest.update(chunk)
                    out.write(chunk)
        if expected is not None and expected.isdigit() and size != int(expected):
            raise DatasetError(
                f"cannot download the original MathComp dataset from {url}: the connection closed after "
                f"{size} of {expected} bytes; {hint}"
            )
        if digest.hexdigest() != sha256:
            raise DatasetError(
                f"the file downloaded from {url} has sha256 {digest.hexdigest()}, not the pinned {sha256} "
                f"(commit {ORIGINAL_COMMIT}); {hint}"
            )
        os.replace(temp, target)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        reason = f"HTTP {exc.code} {exc.reason}" if isinstance(exc, urllib.error.HTTPError) else exc
        reason = getattr(reason, "reason", None) or reason
        raise DatasetError(
            f"cannot download the original MathComp dataset from {url}: {reason}; {hint}"
        ) from exc
    finally:
        Path(temp).unlink(missing_ok=True)
