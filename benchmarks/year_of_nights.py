"""A year of nightly records, the site built from them and the history branch they are kept on:
``python -m benchmarks.year_of_nights [--nights 365] [--models 3] [--matrices default,full] [--keep-days 90]``.

For each matrix (the default one, 14 cases and their generated twins; the full one, ``--identities=all``,
238 and 238), real suite runs of the symbolic reference: one with every answer right, written as the baseline,
then ``--variants`` nights whose answers are perturbed (benchmarks/perturbed_model.py: a quiet night with a few
answers flipped, a noisier one, and a regressing one that follows cue words), each recorded as the nightly
does (`mathcomp record --from RUN --baseline BASE`). The year: ``--nights`` nights of ``--models`` models, each
night of each model one of the variants' records under its own run id and model name (nine nights in ten
quiet or noisy, one in ten regressing), its files rewritten so that no two nights share a file.

Measured: a night's record (the files `mathcomp record` keeps, against the run folder's own summary.json,
report.html and the item diff with every item, as records kept them before; before, the report also listed
every item when the run had a baseline, so the "before" here is less than records were); the site (`mathcomp site` over
every record: its size, per night, and the seconds it took); the branch (every night pushed by `mathcomp
keep`'s own code with ``--keep-days``, then a bare clone of it: its size, its commits). Prints a table and
writes reports/benchmarks/year_of_nights.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.common import OUT_DIR, ROOT, load, suite_env
from mathcomp_tests.keep import git, nights, push, remote
from mathcomp_tests.record import packed

OUT = OUT_DIR / "year_of_nights.json"
MATRICES = {"default": (), "full": ("--identities=all",)}
VARIANTS = (
    ("quiet", ("--perturb-rate=0.002",)),
    ("noisy", ("--perturb-rate=0.01",)),
    ("regressing", ("--perturb-rate=0.002", "--perturb-towards-cue=0.1")),
)
PAGES_GOAL = 1024**3
"""GitHub Pages' limit on a published site."""
SITE = (
    "import resource, sys\n"
    "from mathcomp_tests.cli import main\n"
    "code = main(['site', *sys.argv[1:]])\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    "sys.exit(code)\n"
)
"""`mathcomp site` in a process of its own, printing its peak resident memory (bytes) last."""
GOALS = {"default": 300 * 1000, "full": 2 * 1000 * 1000}
"""A night's record, in bytes, at most: the goals docs/benchmarks.md states."""


def _size(path: Path) -> int:
    return (
        sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        if path.is_dir()
        else path.stat().st_size
    )


def _suite(work: Path, *args: str) -> Path:
    """One run of the suite under the perturbing plugin; its run folder."""
    reports = work / "reports"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "benchmarks.perturbed_model", "--model=symbolic"]
    command += [f"--reports-dir={reports}", f"--cache-dir={work / 'cache'}", *args]
    proc = subprocess.run(command, cwd=ROOT, env=suite_env(), capture_output=True, text=True, timeout=1800)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"the suite failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return (reports / "latest").resolve()


def _before(run: Path, base: Path, work: Path) -> int:
    """The run folder's own files as a record kept them before: summary.json, report.html and the item diff
    listing every item (the old diff.html hid its unchanged rows by CSS)."""
    every = work / f"every-{run.name}.html"
    with open(work / "diff.log", "w") as said:
        subprocess.run(
            [sys.executable, "-m", "mathcomp_tests", "diff", str(base), str(run), "--all", "--html", str(every)],
            cwd=ROOT, env=suite_env(), stdout=said, check=True, timeout=900,
        )  # fmt: skip
    return _size(run / "summary.json") + _size(run / "report.html") + _size(every)


def _variants(matrix: str, work: Path) -> tuple[dict[str, Path], dict[str, int]]:
    """The baseline run and one record per variant of ``matrix``; each record's size before this change."""
    extra = MATRICES[matrix]
    base = work / "baseline.txt"
    _suite(work / "base", *extra, f"--update-baseline={base}")
    found, before = {}, {}
    for index, (name, args) in enumerate(VARIANTS):
        run = _suite(work / name, *extra, f"--baseline={base}", f"--perturb-seed={index + 1}", *args)
        kept = work / "variants"
        with open(work / "record.log", "a") as said:
            command = [sys.executable, "-m", "mathcomp_tests", "record", str(kept), "--from", str(run)]
            command += ["--baseline", str(base)]
            code = subprocess.run(
                command, cwd=ROOT, env=suite_env(), stdout=said, stderr=said, timeout=900
            ).returncode
        if code != 0:
            raise SystemExit(f"mathcomp record failed for {name}: see {work / 'record.log'}")
        found[name] = kept / json.loads((run / "summary.json").read_text())["run_id"]
        before[name] = _before(run, base, work)
    return found, before


def _variant_of(night: int, model: int) -> str:
    if (night + 3 * model) % 10 == 0:
        return "regressing"
    return "noisy" if (night + model) % 3 == 0 else "quiet"


def _night(source: Path, target: Path, run_id: str, model: str) -> None:
    """``source``'s record as the night ``run_id`` of ``model``: the run id and model in its summary, every
    page's old run id replaced, each file packed again (so no two nights share a file)."""
    target.mkdir(parents=True)
    summary = json.loads(gzip.decompress((source / "summary.json.gz").read_bytes()))
    old = summary["run_id"]
    summary |= {"run_id": run_id, "model": model}
    text = json.dumps(summary, separators=(",", ":")).encode() + b"\n"
    (target / "summary.json.gz").write_bytes(packed.pack(text))
    for page in ("report.html.gz", "diff.html.gz"):
        if (source / page).is_file():
            body = gzip.decompress((source / page).read_bytes()).replace(old.encode(), run_id.encode())
            (target / page).write_bytes(packed.pack(body))


def _year(variants: dict[str, Path], nights: int, models: int, into: Path) -> list[list[Path]]:
    """Each night's records (one per model), oldest first, ending today."""
    today = dt.datetime.now().replace(hour=3, minute=17, second=0, microsecond=0)
    every = []
    for n in range(nights):
        when = today - dt.timedelta(days=nights - 1 - n)
        tonight = []
        for m in range(models):
            run_id = f"{when:%Y%m%d-%H%M%S}-model{m}-{n:04x}"
            folder = into / run_id
            _night(variants[_variant_of(n, m)], folder, run_id, f"symbolic-model-{m}")
            tonight.append(folder)
        every.append(tonight)
    return every


def _keep(year: list[list[Path]], keep_days: int, work: Path) -> dict[str, Any]:
    """Every night pushed by keep's own code (its records, one commit a night) onto a bare remote; then a
    bare clone of the branch: its size and commits."""
    origin = work / "origin.git"
    git.run(["init", "--quiet", "--bare", str(origin)])
    where = remote.resolve(str(origin), work)
    started = time.perf_counter()
    for tonight in year:
        with tempfile.TemporaryDirectory(dir=work) as repo, tempfile.TemporaryDirectory(dir=work) as new:
            for record in tonight:
                shutil.copytree(record, Path(new) / record.name)
            git_dir = Path(repo) / "repo.git"
            git.run(["init", "--quiet", "--bare", str(git_dir)])
            kept = nights.read_new(Path(new), print)
            push.keep(git_dir, where, "mathcomp-history", kept, keep_days, print)
    seconds = time.perf_counter() - started
    clone = work / "clone.git"
    command = ["git", "clone", "--quiet", "--bare", "--single-branch", "--branch", "mathcomp-history"]
    subprocess.run([*command, str(origin), str(clone)], check=True, timeout=600)
    commits = int(git.text(["rev-list", "--count", "mathcomp-history"], git_dir=clone))
    held = len(git.text(["ls-tree", "--name-only", "mathcomp-history"], git_dir=clone).split())
    return {"keep_seconds": round(seconds, 1), "clone_bytes": _size(clone), "commits": commits, "held": held}


def measure(matrix: str, nights: int, models: int, keep_days: int, work: Path) -> dict[str, Any]:
    print(f"== {matrix} matrix: runs and variant records", flush=True)
    variants, before = _variants(matrix, work)
    year = _year(variants, nights, models, work / "records")
    sizes = [_size(folder) for tonight in year for folder in tonight]
    print(f"== {matrix} matrix: the site of {len(sizes)} nights", flush=True)
    site = work / "site"
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", SITE, str(work / "records"), str(site)],
        cwd=ROOT, env=suite_env(), capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    site_seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"mathcomp site failed ({proc.returncode}): {proc.stderr[-2000:]}")
    site_peak = int(proc.stdout.strip().splitlines()[-1])
    pages = [p for p in (site / "nights").rglob("*.html")]
    print(f"== {matrix} matrix: {nights} nights kept with --keep-days {keep_days}", flush=True)
    branch = _keep(year, keep_days, work)
    site_bytes = _size(site)
    return {
        "matrix": matrix,
        "cases": len(
            json.loads(gzip.decompress((variants["quiet"] / "summary.json.gz").read_bytes()))["cases"]
        ),
        "variants": {
            name: {"record_bytes": _size(path), "before_bytes": before[name]}
            for name, path in variants.items()
        },
        "record_bytes": {"median": int(statistics.median(sizes)), "max": max(sizes), "total": sum(sizes)},
        "record_goal_bytes": GOALS[matrix],
        "record_goal_met": max(sizes) <= GOALS[matrix],
        "site_bytes": site_bytes,
        "site_night_page_bytes": {
            "median": int(statistics.median(_size(p) for p in pages)),
            "max": max(_size(p) for p in pages),
        },
        "site_seconds": round(site_seconds, 1),
        "site_peak_rss_bytes": site_peak,
        "site_share_of_pages_limit": round(site_bytes / PAGES_GOAL, 3),
        "branch": branch,
    }


def _line(r: Mapping[str, Any]) -> str:
    """One matrix's figures in a line."""
    mb = 1e6
    before = ", ".join(
        f"{n} {v['before_bytes'] / mb:.1f} MB -> {v['record_bytes'] / 1e3:.0f} KB"
        for n, v in r["variants"].items()
    )
    return (
        f"{r['matrix']} ({r['cases']} cases and as many generated): record median "
        f"{r['record_bytes']['median'] / 1e3:.0f} KB, "
        f"max {r['record_bytes']['max'] / 1e3:.0f} KB (goal {r['record_goal_bytes'] / 1e3:.0f} KB: "
        f"{'met' if r['record_goal_met'] else 'not met'}; before: {before}); site "
        f"{r['site_bytes'] / mb:.0f} MB ({100 * r['site_share_of_pages_limit']:.1f}% of Pages' 1 GB), built in "
        f"{r['site_seconds']} s, peak {r['site_peak_rss_bytes'] / mb:.0f} MB; branch clone "
        f"{r['branch']['clone_bytes'] / mb:.1f} MB ({r['branch']['commits']} commit, {r['branch']['held']} "
        f"records held), {r['branch']['keep_seconds']} s of keeping"
    )


def table_rows(r: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The row of docs/benchmarks.md's table (benchmarks/table.py)."""
    return [
        (
            f"a year of nights: {r['nights']} nights x {r['models']} models of the symbolic reference, answers "
            f"perturbed night to night; records, the site, the branch kept with --keep-days {r['keep_days']}",
            "`python -m benchmarks.year_of_nights`",
            "; ".join(_line(m) for m in r["matrices"]),
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nights", type=int, default=365)
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--matrices", default="default,full")
    parser.add_argument("--keep-days", type=int, default=90)
    parser.add_argument("--work", type=Path, default=None, help="keep the records, site and branch here")
    args = parser.parse_args()
    before = load()
    found = []
    for matrix in args.matrices.split(","):
        if args.work is not None:
            work = args.work / matrix
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            found.append(measure(matrix, args.nights, args.models, args.keep_days, work))
        else:
            with tempfile.TemporaryDirectory(prefix=f"year-{matrix}-") as tmp:
                found.append(measure(matrix, args.nights, args.models, args.keep_days, Path(tmp)))
    result = {
        "nights": args.nights,
        "models": args.models,
        "keep_days": args.keep_days,
        "matrices": found,
        "load_before": before,
        "load_after": load(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for r in found:
        print(_line(r))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
