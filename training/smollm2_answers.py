"""Collect SmolLM2-135M-Instruct's real answers for the readers' fixture:
``python -m training.smollm2_answers [--out FILE]`` (after ``make smollm2``).

Runs the suite the way a user does (neutral framing, question at the end, greedy generation): 25 scenarios
in one-word and json, and a --limit=10 draw in cot and cot-json cut at 160 new tokens (their 512-token
budget took over 25 minutes for 25 answers on 2 shared cores; greedy text is the same up to the cut), and
writes one JSON line per answer: the prompt's id, format and raw answer, and a ``reading`` (the label a
careful person reads, or ``invalid``) with a ``why``. Those two are written by hand: a regenerated file
keeps the readings of answers it already had (same id, format and raw text) and leaves ``reading`` null for
a new one, to be read and filled in before the file is committed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mathcomp_tests.paths import ROOT
from mathcomp_tests.reading.context import options_from_prompt

OUT = ROOT / "tests" / "answer_tables" / "smollm2.jsonl"
CACHE = Path("~/.cache/mathcomp-tests/smollm2-answers").expanduser()
"""Kept between runs: regenerating the file asks the model only for what it has not answered yet."""
ARGS = ("--model=smollm2-135m", "--framings=neutral", "--positions=end", "--scoring=generate",
        "--deselect=mathcomp_tests/suite/test_generated.py")
DRAWS = (
    ("--limit=25", "--formats=one-word,json"),
    ("--limit=10", "--formats=cot,cot-json", "--max-new-tokens=160"),
)


def collect(work: Path, cache: Path) -> list[dict[str, object]]:
    lines = []
    for n, draw in enumerate(DRAWS):
        reports = work / f"reports{n}"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--reports-dir={reports}",
                   f"--cache-dir={cache}", *ARGS, *draw]
        subprocess.run(command, cwd=ROOT, env=os.environ.copy(), stdout=sys.stderr, check=False)
        lines += (reports / "latest" / "results.jsonl").read_text().splitlines()
    rows = []
    for record in map(json.loads, lines):
        rows.append({"id": f"{record['scenario']}-{record['case']}", "scenario": record["scenario"],
                     "format": record["format"], "gold": record["gold"],
                     "options": options_from_prompt(record["prompt"]), "raw": record["raw"]})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m training.smollm2_answers", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cache-dir", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    known: dict[tuple[str, str], dict[str, object]] = {}
    if args.out.is_file():
        for row in map(json.loads, args.out.read_text().splitlines()):
            known[(str(row["id"]), str(row["raw"]))] = row
    with tempfile.TemporaryDirectory() as work:
        rows = collect(Path(work), args.cache_dir)
    with open(args.out, "w", encoding="utf-8") as fh:
        for row in sorted(rows, key=lambda r: (str(r["format"]), int(str(r["scenario"])))):
            old = known.get((str(row["id"]), str(row["raw"])), {})
            row["reading"], row["why"] = old.get("reading"), old.get("why", "")
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} answers in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
