"""The job summary: with $GITHUB_STEP_SUMMARY set, the run appends its verdict there as Markdown, once (also
under xdist), everything that came from a model, a file or an option escaped, and no secret's value."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.suite_runner import run_suite

from mathcomp_tests.verdict.job_summary import markdown

ARGS = ("--model=symbolic", "--limit=10", "--framings=neutral,direct-more", "--positions=begin")
HOSTILE = "evil|<script>alert(1)</script>`x`*y*"
SECRET = "sk-do-not-show-12345"


def _cells(row: str) -> list[str]:
    """A Markdown table row's cells, split where GitHub splits them: on pipes not escaped."""
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


def test_a_model_name_from_the_baseline_file_is_escaped_and_secrets_are_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A baseline file whose model line names a hostile model (and holds a secret's value)."""
    path = tmp_path / "baseline.txt"
    assert run_suite(tmp_path, *ARGS, f"--update-baseline={path}").returncode == 0
    path.write_text(path.read_text().replace("model: symbolic", f"model: {HOSTILE}{SECRET}"))
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    monkeypatch.setenv("MATHCOMP_TEST_API_KEY", SECRET)
    run = run_suite(tmp_path, *ARGS, f"--baseline={path}")
    assert run.returncode == 0, run.output
    text = step_summary.read_text()
    # 20 scenarios: the verdict says the gate could not see a rise of 15 points
    assert text.startswith("## MathComp: PASSED: all 2 cases; 2 could not see a rise under 15 points\n"), text
    assert "<script>" not in text and SECRET not in text
    (line,) = [x for x in text.splitlines() if x.startswith("Baseline ")]
    escaped = r"evil\|&lt;script&gt;alert(1)&lt;/script&gt;\`x\`\*y\*&lt;MATHCOMP\_TEST\_API\_KEY&gt;"
    assert line.startswith(f"Baseline {escaped} (")
    assert ": 2 cases compared, 0 rises" in line
    listed = [x for x in text.splitlines() if x.startswith("- ")]  # the cases that could not see a rise, named
    assert [x.split(":")[0] for x in listed] == ["- neutral-begin-std-one-word", "- direct-more-begin-std-one-word"]
    assert all(": less (" in x for x in listed), listed
    assert "2 of 2 compared cases could not see a rise under 15 points at 80% power, on these labels:" in text


def test_the_cases_at_chance_are_named_escaped() -> None:
    """summary.json's ``at_chance``: each case with its accuracy against always giving one answer."""
    at_chance = [{"case": f"neutral-{HOSTILE}", "accuracy": 0.2, "constant": 0.4, "label": "less"}]
    text = markdown({"model": "m", "cases": [], "at_chance": at_chance})
    (item,) = [x for x in text.splitlines() if x.startswith("- ")]
    assert "AT CHANCE: 1 neutral case(s) answered no better than always giving one answer" in text
    assert item == (
        r"- neutral-evil\|&lt;script&gt;alert(1)&lt;/script&gt;\`x\`\*y\*: 20.0% right; always answering 'less' "
        "would be 40.0% right"
    )
    assert "AT CHANCE" not in markdown({"model": "m", "cases": []}), "a summary from before the key has none"


def test_a_failing_case_row_keeps_its_cells_whatever_the_text_holds(tmp_path: Path) -> None:
    """A case that raised with a hostile error text (from a model server, say): one row, seven cells."""
    run = run_suite(tmp_path, *ARGS)
    summary = run.summary
    summary["cases"][0].update(passed=False, scores=None, error=f"boom | {HOSTILE}\nsecond line")
    text = markdown(summary, run.run_dir / "report.html")
    assert text.startswith("## MathComp: FAILED: 1 of 2 cases\n")
    (row,) = [x for x in text.splitlines() if "raised" in x]
    assert len(_cells(row)) == 7 and "<script>" not in row and "second line" in row
    assert r"boom \| evil\|&lt;script&gt;alert(1)&lt;/script&gt;\`x\`\*y\* second line" in row


def test_an_incomplete_run_says_so_first(tmp_path: Path) -> None:
    """summary.json's status and reasons (a summary with neither, from before runs said, is complete)."""
    summary = run_suite(tmp_path, *ARGS).summary
    summary["status"], summary["incomplete_reasons"] = "incomplete", ["interrupted by SIGTERM"]
    assert markdown(summary).startswith("## MathComp: INCOMPLETE (interrupted by SIGTERM): all 2 cases\n")
    summary.pop("status")
    assert markdown(summary).startswith("## MathComp: INCOMPLETE (interrupted by SIGTERM): all 2 cases\n")
    summary.pop("incomplete_reasons")
    assert markdown(summary).startswith("## MathComp: PASSED: all 2 cases\n")


def test_under_xdist_the_controller_appends_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    step_summary = tmp_path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    run = run_suite(tmp_path, *ARGS, "-n", "2")
    assert run.returncode == 0, run.output
    text = step_summary.read_text()
    assert text.count("## MathComp:") == 1 and f"Report: `{run.run_dir / 'report.html'}`" in text


def test_an_unwritable_summary_file_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no-such-folder" / "summary.md"))
    run = run_suite(tmp_path, *ARGS)
    assert run.returncode == 0, run.output
    assert "job summary not written: $GITHUB_STEP_SUMMARY=" in run.output and "Traceback" not in run.output


EVERYTHING_ALLOWED = "[default]\ndir_err = 1.0\ninvalid_rate = 1.0\nerror_rate = 1.0\n"
MENTIONING = "openai/@octocat-#123"
"""A model name that, written as it is, GitHub renders as a mention of a user and a link to issue 123."""
MENTION = re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)(?!/)", re.IGNORECASE)
"""GitHub's user mention (html-pipeline's MentionFilter), found in the rendered HTML's text, not the Markdown:
a backslash before @ is gone by then."""
ISSUE = re.compile(r"(?:^|\W)#(\d+)\b")
"""GitHub's issue or pull request reference (#123), also found in the rendered text."""


pytestmark = pytest.mark.xdist_group("job_summary")
"""One worker runs this module's tests, so its module-scoped fixtures (`read_nothing`) are built once."""


@pytest.fixture(scope="module")
def read_nothing(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The job summary of a real run against a server on 127.0.0.1 whose every answer is unreadable (the
    built-in 'nothing read' check fails its case), the model named with a mention and an issue number."""
    from helpers.fault_server import Fault, FaultServer

    tmp = tmp_path_factory.mktemp("read-nothing")
    thresholds = tmp / "thresholds.toml"
    thresholds.write_text(EVERYTHING_ALLOWED)
    step_summary = tmp / "step-summary.md"
    unreadable = FaultServer(schedule=lambda index, attempt: Fault(text="I would rather not say"))
    with pytest.MonkeyPatch.context() as patch, unreadable.running() as server:
        patch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
        run = run_suite(
            tmp, f"--model={MENTIONING}", f"--api-base={server.url}", f"--thresholds={thresholds}",
            "--limit=10", "--framings=neutral", "--positions=end",
        )  # fmt: skip
    assert run.returncode == 1, run.output
    assert run.case("neutral-end-std-one-word")["breaches"] == ["nothing read"]
    return step_summary.read_text()


def test_the_built_in_nothing_read_check_is_named_as_such_not_as_an_own_check(read_nothing: str) -> None:
    (row,) = [x for x in read_nothing.splitlines() if "neutral-end-std-one-word" in x]
    cells = [c.strip() for c in _cells(row)]
    assert cells[2:5] == [
        "nothing read (built-in check)",
        "invalid rate 100.0%",
        "a case that read nothing never passes",
    ]
    assert "own check" not in read_nothing


def _rendered_text(markdown_text: str) -> str:
    """The text GitHub's filters see: the Markdown rendered (CommonMark and tables), tags dropped."""
    markdown_it = pytest.importorskip("markdown_it")
    html_text = markdown_it.MarkdownIt("commonmark").enable("table").render(markdown_text)
    return re.sub(r"<[^>]+>", " ", html_text)


def test_a_mention_or_an_issue_number_in_a_model_name_is_shown_as_text(read_nothing: str) -> None:
    (line,) = [x for x in read_nothing.splitlines() if x.startswith("Model: ")]
    text = _rendered_text(read_nothing)
    assert not MENTION.search(text) and not ISSUE.search(text), text
    assert _rendered_text(line).strip().replace("\u200d", "") == f"Model: {MENTIONING}", "reads as written"
