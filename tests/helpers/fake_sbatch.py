"""A fake `sbatch` for running docs/examples/slurm-shards.sh on a machine without Slurm: it runs each job at
once, here, as Slurm would run it (an array's tasks one by one with SLURM_ARRAY_TASK_ID, _COUNT, _MIN and
SLURM_ARRAY_JOB_ID set; the log opened before the task starts, and the task not run when it cannot be
opened, as Slurm does), checks that a --dependency names a job it ran, and prints the job id (--parsable).
Every job it ran is appended to $FAKE_SBATCH_LOG as one JSON line (name, step, task, exit code).

Run as ``python -m helpers.fake_sbatch ARGS`` by an ``sbatch`` wrapper on PATH (tests/test_sharding_docs.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KNOWN_FLAGS = ("--parsable",)
VALUED = ("--export", "--job-name", "--array", "--output", "--dependency", "--gres", "--time")


def parse(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    rest = list(argv)
    while rest and rest[0].startswith("--"):
        flag = rest.pop(0)
        name, _, value = flag.partition("=")
        if name in KNOWN_FLAGS:
            options[name] = ""
        elif name in VALUED:
            options[name] = value if value else rest.pop(0)
        else:
            sys.exit(f"fake sbatch: {flag}: not an option this fake knows")
    if not rest:
        sys.exit("fake sbatch: no script given")
    return options, rest


def main(argv: list[str]) -> int:
    options, command = parse(argv)
    ledger = Path(os.environ["FAKE_SBATCH_LOG"])
    ran = [json.loads(line) for line in ledger.read_text().splitlines()] if ledger.exists() else []
    job = str(1000 + len({r["job"] for r in ran}))
    dependency = options.get("--dependency")
    if dependency is not None:
        kind, _, on = dependency.partition(":")
        if kind != "afterany" or on not in {r["job"] for r in ran}:
            sys.exit(f"fake sbatch: --dependency={dependency}: expected afterany on a job submitted before")
    first, _, last = options.get("--array", "").partition("-")
    tasks = list(range(int(first), int(last) + 1)) if first else [None]
    for task in tasks:
        env = {**os.environ, "SLURM_JOB_ID": job}
        if task is not None:
            env |= {
                "SLURM_ARRAY_JOB_ID": job,
                "SLURM_ARRAY_TASK_ID": str(task),
                "SLURM_ARRAY_TASK_COUNT": str(len(tasks)),
                "SLURM_ARRAY_TASK_MIN": first,
            }
        log = (
            options.get("--output", "slurm-%j.out")
            .replace("%A", job)
            .replace("%a", str(task))
            .replace("%j", job)
        )
        try:
            out = open(log, "w")  # noqa: SIM115 (Slurm opens the log first: a missing folder fails the task unseen)
        except OSError:
            code = -1
        else:
            with out:
                code = subprocess.run(
                    ["bash", *command], env=env, stdout=out, stderr=subprocess.STDOUT
                ).returncode
        entry = {"job": job, "name": options.get("--job-name"), "task": task, "log": log, "returncode": code}
        with ledger.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
    print(job)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
