"""The suite end to end on the sympy reference: every case passes, DirErr is zero, every file is written."""

from __future__ import annotations

from pathlib import Path

from helpers.report_reader import read_report
from helpers.suite_runner import REPO, pytest_process, run_suite

from mathcomp_tests.data.scenarios import load


def test_reference_passes_everywhere_with_zero_directional_error(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=20", "--formats=all", "--identities=std,woman")
    assert run.returncode == 0, run.output
    summary = run.summary
    assert summary["cases_run"] == 7 * 2 * 2 * 4 and summary["cases_failed"] == 0
    for case in summary["cases"]:
        assert case["scores"]["dir_err"] == {"less": 0.0, "more": 0.0, "equal": 0.0}, case["case"]
        assert case["scores"]["accuracy"] == 1.0 and case["scores"]["invalid_rate"] == 0.0
    assert len(run.records) == 112 * 20


def test_results_hold_one_line_per_prompt_with_everything_needed_later(tmp_path: Path) -> None:
    run = run_suite(
        tmp_path,
        "--model=symbolic",
        "--limit=5",
        "--framings=direct-more",
        "--positions=end",
        "--identities=asian",
    )
    assert run.returncode == 0, run.output
    every = {s.id: s.label for s in load(REPO / "fixtures" / "scenarios.csv")}
    drawn = run.summary["scenario_ids"]  # --limit draws in proportion (test_stratified_limit.py)
    assert len(drawn) == 5 and set(drawn) <= set(every)
    gold = {i: every[i] for i in drawn}
    records = run.records
    assert [r["scenario"] for r in records] == list(gold)
    for r in records:
        assert r["case"] == "direct-more-end-asian-one-word"
        assert r["gold"] == gold[r["scenario"]] and r["label"] == r["gold"] and r["status"] == "ok"
        assert "an asian person" in r["prompt"].lower() and "Does the Asian person spend more" in r["prompt"]
        assert r["raw"] == r["gold"] and r["model"] == "symbolic"


def test_html_report_shows_every_case_and_its_confusion(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "--model=symbolic", "--limit=8", "--framings=neutral,indirect-less")
    report = read_report(run.run_dir / "report.html")
    assert report.blob is not None
    ids = {key.split("[")[1].rstrip("]") for key in report.blob["tests"]}
    assert ids == {
        "neutral-begin-std-one-word",
        "neutral-end-std-one-word",
        "indirect-less-begin-std-one-word",
        "indirect-less-end-std-one-word",
    }
    extras = [e["content"] for rows in report.blob["tests"].values() for row in rows for e in row["extras"]]
    assert len(extras) == 4 and all("Confusion for" in e for e in extras)
    header, *rows = report.summary_rows
    assert header[:4] == ["case", "DirErr(less)", "DirErr(more)", "DirErr(equal)"]
    assert [r[0] for r in rows] == [
        "neutral-begin-std-one-word",
        "neutral-end-std-one-word",
        "indirect-less-begin-std-one-word",
        "indirect-less-end-std-one-word",
    ]
    assert all(r[1:4] == ["0.0%", "0.0%", "0.0%"] and r[-1] == "pass" for r in rows)
    assert report.scripts == ["inline"], "the report must be self-contained"
    html = (run.run_dir / "report.html").read_text()
    assert '<th>answers</th><td data-key="answers">32 sent to the model now, 0 taken from the cache</td>' in html
    assert html.count('class="mathcomp-figure"') == 2, "the heat-maps and the category bars"


def test_collect_only_lists_one_readable_item_per_condition(tmp_path: Path) -> None:
    proc = pytest_process(
        [
            "--collect-only",
            "-q",
            "--framings=direct-more",
            "--positions=end",
            "--formats=one-word,json",
            "--identities=std,woman",
            f"--reports-dir={tmp_path}",
        ]
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    items = [line for line in proc.stdout.splitlines() if "::test_framing[" in line]
    generated = [line for line in proc.stdout.splitlines() if "::test_generated[" in line]
    assert [g.split("[")[1] for g in generated] == [i.split("[")[1] for i in items]
    assert items == [
        "mathcomp_tests/suite/test_framing.py::test_framing[direct-more-end-std-one-word]",
        "mathcomp_tests/suite/test_framing.py::test_framing[direct-more-end-std-json]",
        "mathcomp_tests/suite/test_framing.py::test_framing[direct-more-end-woman-one-word]",
        "mathcomp_tests/suite/test_framing.py::test_framing[direct-more-end-woman-json]",
    ]
    assert not any(tmp_path.iterdir()), "collecting must not create a run folder"


def test_xdist_workers_share_one_run_folder(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "-n", "2", "--model=symbolic", "--limit=6", "--positions=begin", generated=True)
    assert run.returncode == 0, run.output
    assert run.summary["cases_run"] == 7 + 7  # test_framing's and test_generated's, as pytest counts them
    assert [c["case"] for c in run.summary["generated_cases"]] == [
        "generated:" + c["case"] for c in run.summary["cases"]
    ]
    assert [c["case"] for c in run.summary["cases"]] == [
        f"{f}-begin-std-one-word"
        for f in (
            "neutral",
            "direct-more",
            "direct-less",
            "direct-equal",
            "indirect-more",
            "indirect-less",
            "indirect-equal",
        )
    ]
    assert len(run.records) == 7 * 6
    # partners/ holds a neutral partner a worker asked for a check without having run the neutral case:
    # whether one did depends on how xdist spread the cases
    assert sorted(p.name for p in run.run_dir.iterdir() if p.name != "partners") == [
        "generated",
        "report.html",
        "results.jsonl",
        "summary.json",
    ]
    assert [p.name for p in (run.run_dir / "generated").iterdir()] == ["results.jsonl"]


def test_bad_options_stop_the_run_with_a_clear_message(tmp_path: Path) -> None:
    unknown = run_suite(tmp_path, "--model=gpt-5-turbo-ultra")
    assert unknown.returncode != 0 and "Known aliases: claude-3.5-haiku" in unknown.output
    bad_format = run_suite(tmp_path, "--formats=essay")
    assert bad_format.returncode != 0 and "unknown format essay" in bad_format.output
    broken = tmp_path / "broken.csv"
    broken.write_text("ID,sentence1\n1,hello\n")
    dataset = run_suite(tmp_path, f"--dataset={broken}")
    assert dataset.returncode != 0 and f"{broken}, line 1: missing column(s) sentence2" in dataset.output
