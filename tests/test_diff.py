"""`mathcomp diff RUN_A RUN_B` and the report's "What changed, item by item": real runs of the demo model
(label probabilities under --scoring=logprob) against the always-right symbolic reference, a baseline file
written from a run and its letters altered, and damaged or mismatched copies of them."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.shared_runs import DemoAgainstReference
from helpers.suite_runner import REPO, SuiteRun
from helpers.usage import call

from mathcomp_tests.baseline_file import reader, writer
from mathcomp_tests.data.generated_draw import Draw
from mathcomp_tests.listing import few
from mathcomp_tests.records import results
from mathcomp_tests.scoring import item_changes
from mathcomp_tests.types import LABELS

CUED = "direct-more-begin-std-one-word"
NEUTRAL = "neutral-begin-std-one-word"
CLEAR_SCREEN = "\x1b[2J"
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


@dataclass
class Runs:
    reference: SuiteRun
    """The symbolic model: every answer right (compared with itself asked in the same run, --baseline-model)."""
    demo: SuiteRun
    """The demo model under --scoring=logprob, compared with the reference's run folder (--baseline)."""
    tmp: Path


pytestmark = pytest.mark.xdist_group("diff")
"""One worker runs this module's tests, so its module-scoped fixtures (`runs`) are built once."""


@pytest.fixture(scope="module")
def runs(demo_against_reference: DemoAgainstReference, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The session's two runs (tests/conftest.py; their selection is helpers/shared_runs.COMPARED: 12
    scenarios, neutral and direct-more at the beginning), read only: a test that writes into a run folder
    copies it first."""
    reference, demo = demo_against_reference.reference, demo_against_reference.demo
    assert reference.returncode == 0, reference.output
    assert demo.returncode == 1, demo.output  # the demo model follows the cue: DirErr(more) rose
    return Runs(reference, demo, tmp_path_factory.mktemp("diff"))


def answers(run: SuiteRun) -> dict[tuple[str, str], dict[str, object]]:
    return {(r["case"], r["scenario"]): r for r in run.records}


def test_two_run_folders_list_every_changed_item_worst_case_first(
    runs: Runs, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = call(capsys, "diff", str(runs.reference.run_dir), str(runs.demo.run_dir))
    assert code == 0 and err == "", err
    before, after = answers(runs.reference), answers(runs.demo)
    changed = {k for k in after if after[k]["label"] != before[k]["label"]}
    towards = {k for k in changed if k[0] == CUED and after[k]["label"] == "more"}
    assert towards and changed - towards, "the demo model follows the cue and errs on neutral prompts too"
    assert f"2 cases, 24 items compared, {len(changed)} changed." in out
    headers = [line for line in out.splitlines() if line.startswith((CUED, NEUTRAL))]
    cued = next(line for line in headers if line.startswith(CUED))
    n_cued = len([k for k in changed if k[0] == CUED])
    # the reference is always right: every change is right to wrong, and in the cued case towards more
    assert cued == f"{CUED} (cue more): regression {len(towards) + n_cued:+d}, {n_cued} of 12 items changed"
    regressions = [int(h.split("regression ")[1].split(",")[0]) for h in headers]
    assert regressions == sorted(regressions, reverse=True), "the worst regression first"
    listed = [line for line in out.splitlines() if line.startswith("  scenario ")]
    assert len(listed) == len(changed), "--changed-only is the default"
    # each changed item: its prompt on one line, both answers, the candidate's three probabilities
    case, scenario = sorted(towards)[0]
    block = next(b for b in out.split("\n\n") if b.startswith(CUED)).splitlines()
    at = block.index(
        f"  scenario {scenario}, gold {after[(case, scenario)]['gold']}: to the cue word's label, right to wrong"
    )
    probs = after[(case, scenario)]["probs"]
    assert isinstance(probs, dict)
    assert block[at + 1].startswith("    prompt: Does PERSON_B spend more ")
    assert block[at + 2] == f"    A: {before[(case, scenario)]['label']}  {before[(case, scenario)]['raw']!r}"
    assert block[at + 3] == (
        f"    B: more  'more'  (less {probs['less']:.2f} · more {probs['more']:.2f} · equal {probs['equal']:.2f})"
    )

    code, every, _ = call(capsys, "diff", "--all", str(runs.reference.run_dir), str(runs.demo.run_dir))
    assert code == 0 and len([line for line in every.splitlines() if line.startswith("  scenario ")]) == 24


def test_per_label_counts_are_the_paired_tests_pairs(runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    """The rose/fell per label that diff prints are the ones the run's own comparison counted."""
    code, out, _ = call(capsys, "diff", str(runs.reference.run_dir), str(runs.demo.run_dir))
    assert code == 0
    lines = out.splitlines()
    for case in runs.demo.summary["cases"]:
        changes = case["baseline"]["changes"]
        header = next(i for i, line in enumerate(lines) if line.startswith(case["case"] + " ("))
        expected = " · ".join(
            f"DirErr({y}) rose {changes[y]['rose']} fell {changes[y]['fell']}" for y in LABELS
        )
        assert lines[header + 2] == "  " + expected


def test_a_baseline_file_with_altered_letters_shows_exactly_those_items(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = writer.write(reader.from_run_dir(runs.demo.run_dir), tmp_path / "baseline.txt")
    text = path.read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"case {NEUTRAL}: "))
    letters, sep, probs = line.partition(": ")[2].partition(" | ")  # format 4: the probabilities follow
    swap = {"l": "m", "m": "e", "e": "l"}
    altered = swap[letters[0]] + swap[letters[1]] + letters[2:]
    path.write_text(text.replace(line, f"case {NEUTRAL}: {altered}{sep}{probs}"))

    code, out, err = call(capsys, "diff", str(path), str(runs.demo.run_dir))
    assert code == 0, err
    assert "A: the baseline file keeps answers as letters: no prompt or answer text for it." in out
    assert "2 cases, 24 items compared, 2 changed." in out
    ids = runs.demo.summary["scenario_ids"]
    listed = [line.split(",")[0] for line in out.splitlines() if line.startswith("  scenario ")]
    assert listed == [f"  scenario {ids[0]}", f"  scenario {ids[1]}"]
    letter = {"l": "less", "m": "more", "e": "equal"}
    assert f"    A: {letter[altered[0]]}  (less " in out and f"    B: {letter[letters[0]]}  " in out, (
        "each side's answer, then its label probabilities (format 4 keeps them)"
    )


def test_runs_of_other_selections_are_one_usage_line(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A baseline file of 8 of the 12 scenarios and one of the two cases (as --limit=8 --framings=neutral
    would write), then one from another dataset, then a path that is neither."""
    full = reader.from_run_dir(runs.reference.run_dir)
    kept = full.scenarios[:8]
    fewer = replace(full, scenarios=kept, cases={NEUTRAL: {s: full.cases[NEUTRAL][s] for s in kept}})
    path = writer.write(fewer, tmp_path / "fewer.txt")
    code, out, err = call(capsys, "diff", str(path), str(runs.demo.run_dir))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err == (
        f"mathcomp diff: error: {path} and {runs.demo.run_dir} are not runs of one selection: "
        f"other scenarios (8 in RUN_A, 12 in RUN_B; only in RUN_B: {few(full.scenarios[8:])}; check --limit); "
        f"other cases (1 in RUN_A, 2 in RUN_B; only in RUN_B: {CUED})\n"
    )
    # a baseline file written from another dataset
    path = writer.write(reader.from_run_dir(runs.reference.run_dir), tmp_path / "other.txt")
    text = path.read_text()
    sha = runs.reference.summary["dataset"]["sha256"]
    path.write_text(text.replace(f"dataset-sha256: {sha}", "dataset-sha256: " + "0" * 64))
    code, _, err = call(capsys, "diff", str(path), str(runs.demo.run_dir))
    assert code == 2
    assert (
        "not runs of one selection: another dataset (RUN_A: fixtures/scenarios.csv, sha256 000000000000...; "
        in err
    )
    assert len(err.strip().splitlines()) == 1
    # a path that is neither
    code, _, err = call(capsys, "diff", str(tmp_path / "gone"), str(runs.demo.run_dir))
    assert (
        code == 2
        and err.strip() == f"mathcomp diff: error: {tmp_path / 'gone'}: no such run folder or baseline file"
    )


def test_another_generated_draw_is_named() -> None:
    """Two selections alike but for test_generated's draw (--generated N --hypothesis-seed S)."""
    cases = {"generated:neutral-begin-std-one-word": ("gen-0-1", "gen-0-2")}
    one = item_changes.Selection(
        "A", "d.csv", "ab" * 32, "hf", ("1", "2"), cases, Draw(0, "cd" * 32, cases[next(iter(cases))])
    )
    two = item_changes.Selection(
        "B", "d.csv", "ab" * 32, "hf", ("1", "2"), cases, Draw(1, "ef" * 32, cases[next(iter(cases))])
    )
    assert item_changes.differences(one, one) == []
    assert item_changes.differences(one, two) == [
        "another --generated draw (A: --generated=2 --hypothesis-seed=0, sha256 cdcdcdcdcdcd...; "
        "B: --generated=2 --hypothesis-seed=1, sha256 efefefefefef...)"
    ]


def test_an_answer_that_stayed_while_its_probabilities_moved_is_said() -> None:
    """Label scoring: the same answer with the cue label 9 points likelier is a change; 1 point is not."""
    answer = item_changes.Answer
    base = {s: answer("less", {"less": 0.5, "more": 0.3, "equal": 0.2}) for s in ("1", "2")}
    base["3"] = answer("equal", {"less": 0.2, "more": 0.3, "equal": 0.5})
    candidate = {
        "1": answer("less", {"less": 0.41, "more": 0.39, "equal": 0.2}),
        "2": answer("less", {"less": 0.49, "more": 0.31, "equal": 0.2}),
        "3": answer("more", {"less": 0.2, "more": 0.6, "equal": 0.2}),
    }
    golds: dict[str, str | None] = {"1": "less", "2": "less", "3": "equal"}
    case = item_changes.compare_case(CUED, golds, base, candidate)
    assert [i.kinds for i in case.items] == [
        (item_changes.MOVED,),
        (),
        (item_changes.TOWARDS, item_changes.WORSE),
    ]
    assert case.items[0].cue_shift == pytest.approx(0.09) and case.regression == 2
    more = case.labels[LABELS.index("more")]
    assert (more.rose, more.fell, more.scored) == (1, 0, 3)
    assert more.shift == pytest.approx((0.09 + 0.01 + 0.3) / 3)


def test_damaged_input_is_one_line_naming_file_and_line(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = Path(shutil.copytree(runs.demo.run_dir, tmp_path / "cut"))
    path = run_dir / results.RESULTS
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed while writing
    code, out, err = call(capsys, "diff", str(runs.reference.run_dir), str(run_dir))
    assert (code, out) == (1, "")
    assert err == (
        f"error: {path}: line {len(lines)} is cut short (the run was stopped while writing it); "
        "expected one result record per line\n"
    )
    text = writer.render(reader.from_run_dir(runs.reference.run_dir))
    number, line = next((i, x) for i, x in enumerate(text.splitlines(), 1) if x.startswith(f"case {CUED}: "))
    bad = tmp_path / "bad.txt"
    bad.write_text(text.replace(line, line[:-1] + "?"))
    code, out, err = call(capsys, "diff", str(bad), str(runs.demo.run_dir))
    assert (code, out) == (1, "")
    assert (
        err.startswith(f"error: {bad}:{number}: case {CUED}: unknown answer letter(s) '?'")
        and err.count("\n") == 1
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attributes: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.attributes |= {name for name, _ in attrs}
        self.links += [value or "" for name, value in attrs if name == "href"]


def test_the_html_page_escapes_what_a_model_wrote(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = Path(shutil.copytree(runs.demo.run_dir, tmp_path / "hostile"))
    path = run_dir / results.RESULTS
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0] |= {
        "raw": HOSTILE,
        "label": None,
        "status": "invalid",
        "prompt": HOSTILE + records[0]["prompt"],
    }
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = json.loads((run_dir / results.SUMMARY).read_text())
    (run_dir / results.SUMMARY).write_text(json.dumps(summary | {"model": HOSTILE + CLEAR_SCREEN}))
    page = tmp_path / "diff.html"
    code, out, err = call(capsys, "diff", "--html", str(page), str(runs.reference.run_dir), str(run_dir))
    assert code == 0, err
    assert out.endswith(f"wrote {page}\n")
    text = page.read_text()
    tags = _Tags()
    tags.feed(text)
    assert html.escape(HOSTILE) in text
    assert {"script", "img", "link", "iframe", "object"} & tags.names == set(), (
        "no element from a model's answer"
    )
    assert not [a for a in tags.attributes if a.startswith("on") or a == "src"], "nothing runs or loads"
    assert tags.links and all(link.startswith("#mathcomp-diff-case-") for link in tags.links), (
        "the only links go down the page, from the table of cases to their items"
    )
    listed = set(re.findall(r'id="(mathcomp-diff-case-\d+)"', text))
    assert {link[1:] for link in tags.links} == listed, "a link for each case listed, none to a case not listed"
    assert "mathcomp-diff-changed-only" not in text and 'class="mathcomp-same' not in text, (
        "the changed items alone: no unchanged row hidden by a filter"
    )
    assert "\x1b" not in out and "\\x1b" in out, "no control character reaches the terminal raw"


def test_the_run_report_lists_what_changed_item_by_item(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (runs.demo.run_dir / results.REPORT).read_text()
    assert "What changed, item by item" in page
    before, after = answers(runs.reference), answers(runs.demo)
    changed = sum(after[k]["label"] != before[k]["label"] for k in after)
    rows = Counter(
        "changed" if 'class="mathcomp-changed' in chunk else "same"
        for chunk in page.split("<tr ")[1:]
        if "data-scenario=" in chunk.split(">", 1)[0]
    )
    assert rows == {"changed": changed}, "the report lists the changed items alone"
    unchanged = [int(n) for n in re.findall(r"<p>(\d+) items? unchanged, not listed\.</p>", page)]
    assert sum(unchanged) == 24 - changed, "the others counted"
    assert f"Against the baseline {runs.reference.run_dir}" in page
    # a rebuilt report finds the same baseline and draws the same section (of a copy: the run is shared)
    run_dir = Path(shutil.copytree(runs.demo.run_dir, tmp_path / runs.demo.run_dir.name))
    code, _, err = call(capsys, "report", str(run_dir))
    assert code == 0, err
    rebuilt = (run_dir / "report-rebuilt.html").read_text()
    assert rebuilt.count('class="mathcomp-changed') == page.count('class="mathcomp-changed')


def test_a_base_model_asked_in_the_run_keeps_no_items_and_says_so(runs: Runs) -> None:
    page = (runs.reference.run_dir / results.REPORT).read_text()
    assert (
        "Compared with the base model symbolic asked in this run (--baseline-model): no record of its answers "
        "is kept item by item, so there is no list of the items that changed." in page
    )
    assert 'class="mathcomp-changed-only"' not in page


def test_a_reader_that_stops_early_ends_the_printing_without_a_traceback(runs: Runs) -> None:
    """`mathcomp diff A B | head`: the pipe closes before the list is printed."""
    command = [sys.executable, "-m", "mathcomp_tests", "diff", "--all"]
    with subprocess.Popen(
        [*command, str(runs.reference.run_dir), str(runs.demo.run_dir)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 0 and err == "", err


@pytest.mark.parametrize("where", ["results.jsonl of B", "a new file in A", "B itself"])
def test_an_html_page_inside_a_run_it_reads_is_refused_and_nothing_is_touched(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    a = Path(shutil.copytree(runs.reference.run_dir, tmp_path / "a"))
    b = Path(shutil.copytree(runs.demo.run_dir, tmp_path / "b"))
    target = {"results.jsonl of B": b / results.RESULTS, "a new file in A": a / "diff.html", "B itself": b}[where]
    before = {p: p.read_bytes() for run in (a, b) for p in sorted(run.rglob("*")) if p.is_file()}
    code, out, err = call(capsys, "diff", "--html", str(target), str(a), str(b))
    assert code == 2 and out == "", (out, err)
    said = err.strip().splitlines()[-1]
    assert f"--html {target}: " in said and "-o " not in said, said
    assert {p: p.read_bytes() for run in (a, b) for p in sorted(run.rglob("*")) if p.is_file()} == before


def test_the_cases_come_in_the_gates_order_led_by_a_table_and_regression_is_said_once(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate failed the neutral case (over its ceiling) and passed the cued one: the neutral case comes
    first, in the text, the table and the items, though the cued one has the larger regression."""
    run_dir = Path(shutil.copytree(runs.demo.run_dir, tmp_path / "gated"))
    summary = json.loads((run_dir / results.SUMMARY).read_text())
    for case in summary["cases"]:
        if case["case"] == NEUTRAL:
            case |= {"passed": False, "breaches": ["DirErr(less)"]}
            case["ceilings"]["dir_err"]["less"] = 0.0
        else:
            case |= {"passed": True, "breaches": []}
    (run_dir / results.SUMMARY).write_text(json.dumps(summary))
    page = tmp_path / "diff.html"
    code, out, err = call(capsys, "diff", "--html", str(page), str(runs.reference.run_dir), str(run_dir))
    assert code == 0, err
    headers = [line.split(" (")[0] for line in out.splitlines() if line.startswith((CUED, NEUTRAL))]
    assert headers == [NEUTRAL, CUED], out
    assert out.count("Regression = ") == 1 and "Cases in the gate's order" in out
    text = page.read_text()
    assert text.count("Regression = ") == 1
    table = text.split('class="mathcomp-case-list">', 1)[1].split("</table>", 1)[0]
    assert table.index(NEUTRAL) < table.index(CUED) and "FAILED: DirErr(less)" in table
    assert text.index(f'data-case="{NEUTRAL}"') < text.index(f'data-case="{CUED}"'), "items in the same order"
