"""What a killed run leaves is checked, not trusted: a part file (results.<worker>.jsonl) that ends in a
cut line or holds a damaged one is merged without that line, and the run says so; a worker killed
mid-run leaves a part the merge still takes (tests/test_bad_inputs.py holds the bad inputs of a run).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from helpers import warm_runs
from helpers.fault_server import Fault
from helpers.prompt_server import PromptServer, question
from helpers.suite_runner import REPO

from mathcomp_tests.records import items, results

PERMISSIVE = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n"


# A killed run: a part file that ends in a cut line.


def record(case: str, scenario: int) -> dict[str, Any]:
    return {"case": case, "scenario": str(scenario), "sample": 0, "label": "more", "status": "ok"}


def test_merging_drops_a_parts_cut_last_line_and_says_so(tmp_path: Path) -> None:
    whole = [json.dumps(record("a", n)) + "\n" for n in range(3)]
    killed = tmp_path / "results.gw0.jsonl"
    killed.write_text("".join(whole[:2]) + whole[2][:20])  # stopped half way through its third line
    (tmp_path / "results.gw1.jsonl").write_text("".join(json.dumps(record("b", n)) + "\n" for n in range(2)))
    merged_parts = results.merge_parts(tmp_path, items.record_key)
    assert merged_parts.notes == [
        f"{killed}: line 3 is cut short (the run was stopped while writing it); dropped, the 2 records "
        "before it kept"
    ]
    merged = [json.loads(line) for line in (tmp_path / results.RESULTS).read_text().splitlines()]
    assert merged == merged_parts.records == [record("a", 0), record("a", 1), record("b", 0), record("b", 1)]
    assert not killed.exists()


def test_merging_names_a_damaged_line_inside_a_part_and_keeps_the_rest(tmp_path: Path) -> None:
    part = tmp_path / "results.main.jsonl"
    part.write_text(json.dumps(record("a", 0)) + "\n" + '{"case": "a", "scen\n' + json.dumps(record("a", 1)) + "\n")
    notes = results.merge_parts(tmp_path, items.record_key).notes
    assert len(notes) == 1 and notes[0].startswith(f"{part}: line 2 is not a JSON record (") and "dropped" in notes[0]
    assert len((tmp_path / results.RESULTS).read_text().splitlines()) == 2


def hang_on_cues(prompt: str) -> Fault:
    """Answers a neutral prompt; holds a cued one ("Does PERSON_B spend more ...?") until released."""
    return Fault("hang", delay=120) if question(prompt).startswith("Does") else Fault(text="more")


def _files(process: Any) -> list[Any]:
    """The files ``process`` (a psutil.Process) has open; none where it ended or is not ours to read."""
    import psutil

    try:
        return list(process.open_files())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return []


def test_a_worker_killed_while_writing_leaves_a_cut_line_the_merge_drops_and_says(tmp_path: Path) -> None:
    """kill -9 of the xdist worker while its part file ends half way through a line (cut by the test: a
    kill landing mid-write cannot be timed): the run still merges the part, drops that line, says so, and
    keeps every answer before it."""
    import psutil

    limit = 4
    with PromptServer(hang_on_cues).running() as server:
        thresholds = tmp_path / "thresholds.toml"
        thresholds.write_text(PERMISSIVE)
        reports = tmp_path / "reports"
        command = [
            warm_runs.python(), "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={reports}",
            f"--cache-dir={tmp_path / 'cache'}", "--deselect=mathcomp_tests/suite/test_generated.py",
            "--model=openai/m", f"--api-base={server.url}", f"--thresholds={thresholds}", f"--limit={limit}",
            "--framings=neutral,direct-more", "--positions=end", "-n", "1", "--max-worker-restart=0",
        ]  # fmt: skip
        with open(tmp_path / "run.log", "wb") as log:
            proc = subprocess.Popen(command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        try:
            deadline = time.monotonic() + 120
            part = reports / "none"
            while not part.exists() or len(part.read_text().splitlines()) < limit or not server.requests():
                assert proc.poll() is None, (tmp_path / "run.log").read_text()
                assert time.monotonic() < deadline, "the neutral case never finished"  # hang guard
                time.sleep(0.1)
                part = next(iter(reports.glob("*/results.gw0.jsonl")), part)
            worker = next(  # the worker writing the part: the run's child, or the warm parent's (helpers/warm_runs)
                process for process in psutil.process_iter() if any(f.path == str(part) for f in _files(process))
            )
            while not any(r.status == 0 for r in server.requests()):  # the cued case is being asked
                assert time.monotonic() < deadline, "the cued case was never asked"  # hang guard
                time.sleep(0.05)
            text = part.read_text()  # the worker waits on the server: it writes nothing more
            with open(part, "r+b") as fh:  # as if the kill came half way through its last line
                fh.truncate(len(text.encode()) - len(text.splitlines()[-1].encode()) // 2 - 1)
            worker.kill()
            proc.wait(120)
        finally:
            server.release()
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    output = (tmp_path / "run.log").read_text()
    note = f"{part}: line {limit} is cut short (the run was stopped while writing it); dropped, the 3 records"
    assert note in output, output
    merged = (part.parent / results.RESULTS).read_text().splitlines()
    assert [json.loads(line) for line in merged] == [json.loads(line) for line in text.splitlines()[:-1]]
    summary = json.loads((part.parent / results.SUMMARY).read_text())
    assert len(summary["records_dropped"]) == 1 and summary["records_dropped"][0].startswith(note)
