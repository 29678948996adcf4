"""A PASS is earned and the baseline is never lost: a run interrupted (Ctrl-C, SIGTERM, a server gone),
that ran no case, or that scored nothing is INCOMPLETE everywhere it reports and exits non-zero, and
--update-baseline leaves the team's file byte for byte as it was unless the run was complete and every
case scored."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from helpers import hold_collection, warm_runs
from helpers.fault_server import Fault, FaultServer
from helpers.plugin_env import with_test_plugins
from helpers.suite_runner import REPO, run_suite

from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.baseline_file.fit import Baseline
from mathcomp_tests.baseline_file.format import BaselineError
from mathcomp_tests.report.headline import verdict_html

TWO_CASES = ("--framings=neutral", "--positions=begin,end", "--limit=4")
HOLD = ("-p", "helpers.hold_collection")


def _api(server: FaultServer, workdir: Path, *extra: str) -> tuple[str, ...]:
    """A small run against ``server``, with ceilings that pass its one answer (``more``) to everything."""
    permissive = workdir / "thresholds.toml"
    permissive.parent.mkdir(parents=True, exist_ok=True)
    permissive.write_text("[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n")
    return (
        "--model=openai/fault-server",
        f"--api-base={server.url}",
        "--num-retries=0",
        "--request-timeout=30",
        "--max-concurrency=1",
        f"--thresholds={permissive}",
        *TWO_CASES,
        *extra,
    )


def _start(workdir: Path, *args: str) -> subprocess.Popen[str]:
    """The suite as a user starts it, in a process group of its own (a CI runner's job), without waiting:
    forked from the warm parent, its stand-in passing signals on; with xdist (-n), whose workers a signal to
    the group reaches too, the stand-in passes them to the group the run and its workers are in."""
    python = warm_runs.python(group="-n" in args)
    command = [
        python, "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={workdir / 'reports'}",
        "--deselect=mathcomp_tests/suite/test_generated.py", "--no-cache", *args,
    ]  # fmt: skip
    return subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy(),
        start_new_session=True, preexec_fn=_as_a_terminal_starts_it,
    )  # fmt: skip


def _as_a_terminal_starts_it() -> None:
    """SIGHUP's default action in the run, as a terminal gives it, even where these tests were started under
    nohup (which ignores SIGHUP in every process it starts, and the suite keeps an ignored signal ignored)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _wait_for_requests(server: FaultServer, count: int, proc: subprocess.Popen[str], limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while len(server.requests()) < count:
        assert proc.poll() is None, f"the run ended before its first request:\n{proc.communicate()[0]}"
        assert time.monotonic() < deadline, "no request reached the server"  # hang guard
        time.sleep(0.05)


def _verdict(run_dir: Path) -> str:
    """The report's verdict box as text (tags dropped), from report.html on disk."""
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    found = re.search(r'<div class="mathcomp-verdict[^"]*">(.*?)</div>', page, re.S)
    assert found, "the report has no verdict"
    text = re.sub(r"<style>.*?</style>", " ", found.group(1), flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", text)).split())


def _summary(workdir: Path) -> tuple[dict[str, Any], Path]:
    run_dir = (workdir / "reports" / "latest").resolve()
    return json.loads((run_dir / "summary.json").read_text()), run_dir


def _end_of_run(output: str) -> str:
    """What pytest printed after the cases: the end-of-run section."""
    return output.split("MathComp: INCOMPLETE", 1)[1] if "MathComp: INCOMPLETE" in output else ""


@pytest.mark.parametrize(
    ("sig", "said", "workers"),
    [
        (signal.SIGINT, "interrupted (Ctrl-C)", ()),
        (signal.SIGTERM, "SIGTERM", ()),
        (signal.SIGTERM, "SIGTERM", ("-n", "2")),  # a CI timeout signals the whole job: controller and workers
        (signal.SIGHUP, "SIGHUP (a closed terminal)", ("-n", "2")),  # a dropped SSH session: the same
    ],
)
def test_a_run_stopped_by_a_signal_mid_case_is_incomplete_everywhere(
    tmp_path: Path, sig: signal.Signals, said: str, workers: tuple[str, ...]
) -> None:
    with FaultServer(latency=3.0).running() as server:
        proc = _start(tmp_path, *_api(server, tmp_path), *workers)
        _wait_for_requests(server, 1, proc)  # the first case is under way
        if workers:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        output = proc.communicate(timeout=120)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    summary, run_dir = _summary(tmp_path)
    assert summary["status"] == "incomplete"
    assert any(said in r for r in summary["incomplete_reasons"]), summary["incomplete_reasons"]
    assert any("of the 2 selected cases reported" in r for r in summary["incomplete_reasons"])
    assert (summary["cases_selected"], summary["cases_reported"]) == (2, 0)
    verdict = _verdict(run_dir)
    assert verdict.startswith("INCOMPLETE: this run cannot pass"), verdict
    assert "PASSED" not in verdict
    assert said in _end_of_run(output), output[-3000:]


def _in_a_terminal(
    workdir: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """The suite in a terminal (a pty) of its own, as a user starts it: xdist shows its workers' progress
    there. Returns the process and the terminal's side to read. Forked from the warm parent where one runs,
    through the stand-in that passes a signal to its group on to the command's (the test signals the group)."""
    command = [
        warm_runs.python(group=True), "-m", "pytest", "-p", "no:cacheprovider", f"--reports-dir={workdir / 'reports'}",
        "--deselect=mathcomp_tests/suite/test_generated.py", "--no-cache", *args,
    ]  # fmt: skip
    terminal, side = pty.openpty()
    proc = subprocess.Popen(
        command, cwd=REPO, stdin=side, stdout=side, stderr=side, env=env or os.environ.copy(),
        start_new_session=True,
    )  # fmt: skip
    os.close(side)
    return proc, terminal


def _read(terminal: int, proc: subprocess.Popen[bytes], until: str | None = None, limit: float = 120) -> str:
    """What the terminal showed, up to ``until`` (None: to the end of the process)."""
    shown = b""
    deadline = time.monotonic() + limit
    while until is None or until not in shown.decode(errors="replace"):
        never = f"the terminal never showed {until!r}:\n{shown.decode(errors='replace')}"
        assert time.monotonic() < deadline, never  # hang guard
        if not select.select([terminal], [], [], 0.2)[0]:
            continue
        try:
            chunk = os.read(terminal, 1 << 16)
        except OSError:  # EIO: every process on the terminal has ended
            chunk = b""
        if not chunk:
            assert until is None, f"the run ended before {until!r}:\n{shown.decode(errors='replace')}"
            break
        shown += chunk
    return shown.decode(errors="replace")


def test_ctrl_c_while_the_workers_start_says_the_run_was_interrupted_before_any_case(tmp_path: Path) -> None:
    held = tmp_path / "held"
    held.mkdir()
    env = with_test_plugins(os.environ.copy(), {hold_collection.FOLDER: str(held)})
    proc, terminal = _in_a_terminal(tmp_path, "--model=symbolic", *TWO_CASES, "-n", "2", *HOLD, env=env)
    try:
        shown = _read(terminal, proc, until="initialized: 2/2 workers")
        deadline = time.monotonic() + 120
        while hold_collection.held(held) != ["gw0", "gw1"]:  # both wait in their collection
            assert proc.poll() is None and time.monotonic() < deadline, "the workers never collected"  # hang guard
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches every process of the terminal's job
        shown += _read(terminal, proc)
        proc.wait(timeout=60)
    finally:
        os.close(terminal)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, shown
    summary, run_dir = _summary(tmp_path)
    assert summary["cases_selected"] is None, "no worker had collected yet"
    assert summary["incomplete_reasons"] == [
        "the run was interrupted (Ctrl-C) before every case ended",
        "no case ran: the run was stopped before the selection was known (before collection ended)",
    ]
    assert "matched none" not in _verdict(run_dir)
    assert "before the selection was known" in _end_of_run(shown)


def test_a_run_started_under_nohup_keeps_ignoring_sighup() -> None:
    from mathcomp_tests.plugin.session_tracker import Tracker

    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        tracker = Tracker()
        tracker.install()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN, "nohup's choice was overridden"
        assert signal.getsignal(signal.SIGTERM) == tracker._on_signal
        tracker.uninstall()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_the_signalled_runs_get_sighup_as_a_terminal_gives_it_even_under_nohup() -> None:
    """`nohup make test` ignored SIGHUP in every run these tests start, and the SIGHUP case then ran to the end."""
    shown = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN)"]
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        inherited = subprocess.run(shown, capture_output=True, text=True, check=True).stdout
        started = subprocess.run(
            shown, capture_output=True, text=True, check=True, preexec_fn=_as_a_terminal_starts_it
        ).stdout
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert inherited.strip() == "True", "ignored: what nohup leaves to every process it starts"
    assert started.strip() == "False"


def test_a_selection_that_matches_no_case_is_incomplete_not_passed(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "-k", "nomatch")
    assert run.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, run.output
    assert run.summary["status"] == "incomplete"
    assert run.summary["incomplete_reasons"] == [
        "no case ran: the selection matched none (check -k, -m, --deselect and the options)"
    ]
    assert _verdict(run.run_dir) == (
        "INCOMPLETE: this run cannot pass no case ran: the selection matched none (check -k, -m, --deselect "
        "and the options)"
    )
    assert "no case ran" in _end_of_run(run.output)


def test_a_complete_run_says_so_and_passes(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", *TWO_CASES)
    assert run.returncode == 0, run.output
    assert (run.summary["status"], run.summary["incomplete_reasons"]) == ("complete", [])
    assert (run.summary["cases_selected"], run.summary["cases_reported"]) == (2, 2)
    assert _verdict(run.run_dir).startswith("PASSED: all 2 cases")
    assert "INCOMPLETE" not in run.output


def _good_baseline(tmp_path: Path, server: FaultServer) -> tuple[Path, bytes]:
    """The team's baseline, written by a complete run against the server while it answers."""
    path = tmp_path / "gate" / "baseline.txt"
    first = run_suite(tmp_path / "first", *_api(server, tmp_path, f"--update-baseline={path}"), cache=False)
    assert first.returncode == 0, first.output
    assert f"baseline written: {path}" in first.output
    return path, path.read_bytes()


def test_a_server_that_dies_mid_run_leaves_the_baseline_untouched(tmp_path: Path) -> None:
    with FaultServer(latency=0.3).running() as server:
        path, good = _good_baseline(tmp_path, server)
        mark = len(server.requests())
        proc = _start(
            tmp_path / "second",
            *_api(server, tmp_path, f"--update-baseline={path}", "--max-connection-failures=2", "--server-timeout=3"),
        )
        _wait_for_requests(server, mark + 2, proc)
    output = proc.communicate(timeout=180)[0]  # the server is gone from here on
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output
    assert path.read_bytes() == good, "the baseline was replaced by an interrupted run"
    assert "baseline not written: the run is incomplete (the run stopped early: the model server" in output
    assert f"; {path} unchanged" in output
    assert "baseline written" not in output
    summary, run_dir = _summary(tmp_path / "second")
    assert summary["status"] == "incomplete"
    assert any(r.startswith("the run stopped early: the model server at") for r in summary["incomplete_reasons"])
    assert _verdict(run_dir).startswith("INCOMPLETE: this run cannot pass")
    assert reader.load(path).cases, "the kept baseline still reads"


def test_a_server_that_only_errs_leaves_the_baseline_untouched(tmp_path: Path) -> None:
    with FaultServer(latency=0.05).running() as server:
        path, good = _good_baseline(tmp_path, server)
        server.schedule = lambda index, attempt: Fault("server-error")
        run = run_suite(tmp_path / "second", *_api(server, tmp_path, f"--update-baseline={path}"), cache=False)
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.output
    assert path.read_bytes() == good, "the baseline was overwritten with error answers"
    not_written = r"baseline not written: the run is incomplete \(2 cases scored nothing .*\); (.*) unchanged"
    assert re.search(not_written, run.output)
    assert run.summary["status"] == "incomplete"
    assert run.summary["incomplete_reasons"] == [
        "2 cases scored nothing (the case raised, or every request failed): neutral-begin-std-one-word, "
        "neutral-end-std-one-word"
    ]
    verdict = _verdict(run.run_dir)
    assert verdict.startswith("INCOMPLETE: this run cannot pass"), verdict
    assert run.output.index("MathComp: INCOMPLETE") < run.output.index("MathComp directional error")


def test_the_verdict_of_an_incomplete_run_never_says_passed() -> None:
    summary = {"cases": [], "status": "incomplete", "incomplete_reasons": ["the run was interrupted (Ctrl-C)"]}
    html = verdict_html(summary)
    assert "PASSED" not in html and "INCOMPLETE: this run cannot pass" in html
    assert "the run was interrupted (Ctrl-C)" in html
    assert "PASSED: all 0 cases" in verdict_html({"cases": []}), "an older summary without status is complete"


def _written(tmp_path: Path) -> Path:
    """A baseline file of two cases, as --update-baseline writes it."""
    answers = {"1": "less", "2": "more"}
    made = Baseline(
        source=tmp_path, model="symbolic", revision=None, dataset="d.csv", dataset_sha256="0" * 64,
        prompt_set="hf", scenarios=("1", "2"),
        cases={"neutral-begin-std-one-word": answers, "neutral-end-std-one-word": answers},
    )  # fmt: skip
    return writer.write(made, tmp_path / "baseline.txt")


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda t: t[: t.index("case ")], r"has no case lines"),
        (lambda t: t[: t.rindex("case ")], r"its header says 2 case lines, it has 1"),
        (lambda t: t[:-2], r"is damaged: cut short \(its last line has no line end"),
        (lambda t: t[: t.rindex("case ") + 12], r"is damaged: cut short"),
    ],
)
def test_a_baseline_cut_short_is_named_damaged_with_its_path(tmp_path: Path, cut: Any, message: str) -> None:
    path = _written(tmp_path)
    assert len(reader.load(path).cases) == 2
    path.write_text(cut(path.read_text()))
    with pytest.raises(BaselineError, match=message) as caught:
        reader.load(path)
    assert str(path) in str(caught.value)
    assert "another selection" not in str(caught.value)


def test_a_format_2_file_without_a_count_is_still_read(tmp_path: Path) -> None:
    path = _written(tmp_path)
    path.write_text(path.read_text().replace("format: 4", "format: 2").replace("cases: 2\n", ""))
    assert len(reader.load(path).cases) == 2


def test_a_run_folder_of_an_incomplete_run_is_no_baseline(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "-k", "nomatch")
    with pytest.raises(BaselineError, match=r"an incomplete run \(no case ran"):
        reader.load(run.run_dir)
