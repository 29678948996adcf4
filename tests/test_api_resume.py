"""Kill a run with SIGKILL half way, rerun it: what was answered comes from the cache, only the rest is sent."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from helpers import warm_runs
from helpers.cache_rows import cached_rows
from helpers.fault_server import OK, Fault, FaultServer, always_ok
from helpers.suite_runner import REPO, run_suite

PROMPTS = 16
HALF = PROMPTS // 2


def answer_half_then_hang(index: int, attempt: int) -> Fault:
    """The first half of the prompts is answered; the rest is held until the run is killed."""
    return OK if index < HALF else Fault("hang", delay=60)


def test_sigkill_half_way_then_rerun_sends_only_the_unanswered(tmp_path: Path) -> None:
    thresholds = tmp_path / "thresholds.toml"
    thresholds.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 0.0\n")
    with FaultServer(schedule=answer_half_then_hang, latency=0.05).running() as server:
        args = (
            "--model=openai/slow-server",
            f"--api-base={server.url}",
            f"--limit={PROMPTS}",
            "--framings=neutral",
            "--positions=end",
            "--max-concurrency=2",
            f"--thresholds={thresholds}",
        )
        command = [warm_runs.python(), "-m", "pytest", "-p", "no:cacheprovider"]
        command += [f"--reports-dir={tmp_path / 'reports'}", f"--cache-dir={tmp_path / 'cache'}", *args]
        cache = tmp_path / "cache" / "responses.sqlite"
        with open(tmp_path / "killed.log", "wb") as log:
            proc = subprocess.Popen(
                command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy()
            )
        try:
            deadline = time.monotonic() + 180  # hang guard (a loaded machine starts pytest slowly)
            while cached_rows(cache) < HALF:  # every answer is in the cache while the run still goes on
                assert proc.poll() is None, (tmp_path / "killed.log").read_text()
                assert time.monotonic() < deadline, "the first half was never answered"  # hang guard
                time.sleep(0.05)
            assert len(server.answered()) == HALF
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        assert proc.returncode == -signal.SIGKILL
        answered_before = {r.prompt for r in server.answered()}
        assert len(answered_before) == HALF and cached_rows(cache) == HALF

        server.schedule = always_ok
        server.release()  # the held requests end (the client that sent them is gone)
        mark = len(server.requests())  # the killed run can send nothing more
        rerun = run_suite(tmp_path, *args)
        sent_again = server.requests(since=mark)

    assert rerun.returncode == 0, rerun.output
    records = rerun.records
    assert len(records) == PROMPTS and all(r["status"] == "ok" for r in records)
    everything = {r["prompt"] for r in records}
    assert sorted(r.prompt for r in sent_again) == sorted(everything - answered_before), (
        "each unanswered once"
    )
    assert {r["prompt"] for r in records if r["cached"]} == answered_before
    assert rerun.summary["prompts_sent"] == PROMPTS - HALF
