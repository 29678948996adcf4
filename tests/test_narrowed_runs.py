"""A run pytest narrowed (-k, -m, --lf, --sw, --deselect, node ids) says so wherever it gives its verdict, and
with --update-baseline rewrites only its own cases inside the team's file, every other line kept byte for byte,
or refuses and leaves the file as it was."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.fault_server import Fault, FaultServer
from helpers.suite_runner import pytest_process, run_suite

from mathcomp_tests.verdict.of_run import verdict

ARGS = ("--model=symbolic", "--limit=10", "--framings=neutral,direct-more")
FRAMING = "mathcomp_tests/suite/test_framing.py"
CASES = (
    "neutral-begin-std-one-word",
    "neutral-end-std-one-word",
    "direct-more-begin-std-one-word",
    "direct-more-end-std-one-word",
)
COMMENT = "# kept: a note the team wrote by hand\n"


def _case_lines(text: str) -> dict[str, str]:
    return {line.split(":")[0][5:]: line for line in text.splitlines() if line.startswith("case ")}


pytestmark = pytest.mark.xdist_group("narrowed_runs")
"""One worker runs this module's tests, so its module-scoped fixtures (`whole_run`) are built once."""


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A whole run's baseline file, then marked by hand: one case's letters all `x`, and a comment of the team's."""
    folder = tmp_path_factory.mktemp("whole")
    path = folder / "baseline.txt"
    whole = run_suite(folder, *ARGS, f"--update-baseline={path}")
    assert whole.returncode == 0 and "baseline written" in whole.output, whole.output
    assert whole.summary["narrowed"] is None
    text = path.read_text()
    marked = _case_lines(text)[CASES[0]]
    return text.replace(marked, f"case {CASES[0]}: " + "x" * 10) + COMMENT


def _team_file(folder: Path, text: str) -> Path:
    return _write(folder / "baseline.txt", text)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("narrowing", "ran", "by"),
    [
        (
            ("-k", "neutral-begin or direct-more-end"),
            (CASES[0], CASES[3]),
            "-k 'neutral-begin or direct-more-end'",
        ),
        ((f"--deselect={FRAMING}::test_framing[{CASES[1]}]",), (CASES[0], CASES[2], CASES[3]), "--deselect"),
        ((f"{FRAMING}::test_framing[{CASES[0]}]",), (CASES[0],), "node ids"),
    ],
    ids=["-k", "--deselect", "node id"],
)
def test_a_narrowed_run_rewrites_only_its_cases_and_never_reads_as_the_suites_pass(
    tmp_path: Path, whole_run: str, narrowing: tuple[str, ...], ran: tuple[str, ...], by: str
) -> None:
    path = _team_file(tmp_path, whole_run)
    before = path.read_text()
    run = run_suite(tmp_path, *ARGS, *narrowing, f"--update-baseline={path}")
    assert run.returncode == 0, run.output
    after = path.read_text()
    old, new = _case_lines(before), _case_lines(after)
    assert set(new) == set(CASES)  # no case dropped
    for case in CASES:
        if case in ran:
            assert new[case] != f"case {case}: " + "x" * 10 and "x" not in new[case].split(": ")[1]
        else:
            assert new[case] == old[case]
    rewritten = before
    for case in ran:
        rewritten = rewritten.replace(old[case], new[case])
    assert after == rewritten  # every other byte as it was: header, comment, order
    assert after.endswith(COMMENT)
    assert (
        f"baseline updated: {path}: {len(ran)} of its 4 cases rewritten from this run, the other {4 - len(ran)} "
        f"kept as they were (the run was narrowed by {by})" in run.output
    ), run.output
    block = run.summary["narrowed"]
    assert block["by"] == [by] and block["cases_selected"] == len(ran) and block["cases_in_suite"] == 4
    assert sorted(block["left_out"]) == sorted(set(CASES) - set(ran))
    line = f"PASSED: {len(ran)} of 4 cases selected (narrowed by {by})"
    assert verdict(run.summary).line == line
    assert f"MathComp: narrowed by {by}: {len(ran)} of 4 cases selected; not run: " in run.output
    assert line in (run.run_dir / "report.html").read_text().replace("&#x27;", "'")


def test_a_marker_expression_narrows_too_and_a_whole_run_says_what_it_dropped(
    tmp_path: Path, whole_run: str
) -> None:
    path = _team_file(tmp_path, whole_run)
    identities = ("--framings=neutral", "--positions=begin", "--identities=std,woman")
    marked = run_suite(tmp_path, *ARGS, *identities, "-m", "not identity", f"--update-baseline={path}")
    assert marked.returncode == 0, marked.output
    assert marked.summary["narrowed"]["by"] == ["-m 'not identity'"]
    assert marked.summary["narrowed"]["left_out"] == ["neutral-begin-woman-one-word"]
    assert "1 of its 4 cases rewritten" in marked.output, marked.output
    # The options, not pytest, chose a smaller selection: that is the suite now, and the file follows it.
    whole = run_suite(tmp_path, *ARGS, "--framings=neutral", f"--update-baseline={path}")
    assert whole.summary["narrowed"] is None
    assert sorted(_case_lines(path.read_text())) == sorted(CASES[:2])
    assert (
        "2 cases of the old file are no longer selected and were dropped: direct-more-begin-std-one-word, "
        "direct-more-end-std-one-word" in whole.output
    ), whole.output


def test_a_narrowed_run_of_another_model_or_other_scenarios_leaves_the_file_as_it_was(
    tmp_path: Path, whole_run: str
) -> None:
    path = _team_file(tmp_path, whole_run)
    before = path.read_bytes()
    other_model = run_suite(
        tmp_path,
        *ARGS[1:],
        "--model=hf:fixtures/models/mathcomp-tiny",
        "-k",
        "neutral",
        f"--update-baseline={path}",
    )
    assert other_model.returncode in (0, 1), other_model.output
    assert (
        f"baseline not written: the run was narrowed by -k 'neutral', so it may only rewrite its own cases inside "
        f"{path}, but {path} holds another model (the file's symbolic, the run's hf:fixtures/models/mathcomp-tiny)"
        in other_model.output
    ), other_model.output
    fewer = run_suite(tmp_path, "--model=symbolic", "--limit=5", "--framings=neutral", "-k", "begin",
                      f"--update-baseline={path}")  # fmt: skip
    assert "holds other scenarios (10 in the file, 5 in the run; check --limit)" in fewer.output, fewer.output
    assert path.read_bytes() == before


def test_a_narrowed_run_with_no_file_yet_writes_its_cases_and_says_it_was_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    run = run_suite(tmp_path, *ARGS, "-k", "neutral", f"--update-baseline={path}")
    assert run.returncode == 0, run.output
    assert sorted(_case_lines(path.read_text())) == sorted(CASES[:2])
    assert "the run was narrowed by -k 'neutral': the file holds only these 2 of the 4 cases" in run.output, (
        run.output
    )


def test_a_run_that_read_no_answer_writes_no_baseline(tmp_path: Path, whole_run: str) -> None:
    path = _team_file(tmp_path, whole_run)
    before = path.read_bytes()
    thresholds = _write(
        tmp_path / "lenient.toml", "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n"
    )
    with FaultServer(
        schedule=lambda index, attempt: Fault(text="I would rather not say")
    ).running() as server:
        run = run_suite(
            tmp_path, "--model=openai/m", f"--api-base={server.url}", f"--thresholds={thresholds}", "--limit=10",
            "--framings=neutral", "--positions=end", f"--update-baseline={path}",
        )  # fmt: skip
    assert (
        "baseline not written: 1 case read no answer (every answer unreadable): neutral-end-std-one-word"
        in run.output
    ), run.output
    assert path.read_bytes() == before


# --lf and --sw need pytest's cache, which this repository's own configuration turns off: a user's repository
# (a folder of its own, the suite selected by --pyargs) has it.
LENIENT = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n"
STRICT = LENIENT + "\n[framing.direct-more]\ndir_err = { more = 0.0 }\n"
DEMO = (
    "--model=hf:" + str(Path(__file__).resolve().parents[1] / "fixtures/models/mathcomp-tiny"),
    "--limit=10",
)


def _user_run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        "--noconftest", "--pyargs", "mathcomp_tests.suite", *DEMO, "--framings=neutral,direct-more",
        "--generated=0", f"--reports-dir={repo / 'reports'}", f"--cache-dir={repo / 'answers'}", *args,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return pytest_process(command, cwd=repo, env=env)


@pytest.mark.slow
def test_last_failed_and_stepwise_runs_update_only_their_cases(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    strict, lenient = _write(repo / "strict.toml", STRICT), _write(repo / "lenient.toml", LENIENT)
    path = repo / "baseline.txt"
    first = _user_run(repo, f"--thresholds={strict}", f"--update-baseline={path}")
    assert first.returncode == 1 and "baseline written" in first.stdout, first.stdout + first.stderr
    text = _write(path, path.read_text() + COMMENT).read_text()
    last_failed = _user_run(repo, "--lf", f"--thresholds={lenient}", f"--update-baseline={path}")
    out = last_failed.stdout
    assert last_failed.returncode == 0, out + last_failed.stderr
    assert (
        "2 of its 4 cases rewritten from this run, the other 2 kept as they were (the run was narrowed by --lf)"
        in out
    )
    assert path.read_text() == text  # the same answers: rewritten as they were, the rest untouched
    # --sw: the first run stops at the first failure (incomplete: nothing written), the second starts there.
    stopped = _user_run(repo, "--sw", f"--thresholds={strict}", f"--update-baseline={path}")
    assert stopped.returncode != 0 and "baseline not written: the run is incomplete" in stopped.stdout, (
        stopped.stdout
    )
    resumed = _user_run(repo, "--sw", f"--thresholds={lenient}", f"--update-baseline={path}")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "MathComp: narrowed by --sw: 2 of 4 cases selected" in resumed.stdout, resumed.stdout
    assert path.read_text() == text


def test_the_default_baseline_file_goes_to_the_users_rootdir_not_the_package(tmp_path: Path) -> None:
    """A repository without a thresholds.toml of its own is held to the packaged ceilings; its baseline is its
    own file all the same."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run = _user_run(repo, "-k", "neutral", "--update-baseline")
    assert f"baseline written: {repo / 'baseline.txt'} " in run.stdout, run.stdout + run.stderr
    assert (repo / "baseline.txt").is_file()
